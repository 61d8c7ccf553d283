using System.Net.Http;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;

namespace Pmpi.Rpc.Security.Internal;

/// <summary>A server with an ephemeral self-signed certificate and no client certificates (<see cref="RpcSecurity.SelfSigned"/>).</summary>
internal sealed class SelfSignedSecurity(X509Certificate2 certificate) : RpcSecurity
{
    public override bool UsesTls => true;

    public override string Description => "TLS with a pinned self-signed certificate";

    internal override ReadOnlySpan<byte> TicketKey => throw new InvalidOperationException("A rank endpoint holds no cluster key.");

    /// <summary>Callers prove their job with the key in their first frame, checked by the endpoint itself.</summary>
    public override bool TryAuthenticate(HttpContext context, out string failure)
    {
        failure = "";
        return true;
    }

    internal override void ConfigureListener(ListenOptions listen) => listen.UseHttps(new HttpsConnectionAdapterOptions
    {
        ServerCertificate = certificate,
        ClientCertificateMode = ClientCertificateMode.NoCertificate,
        SslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    });

    internal override void ConfigureClient(SocketsHttpHandler handler) => throw new InvalidOperationException("A rank endpoint's certificate serves, it does not dial.");
}

/// <summary>A client accepting one server certificate, by its SHA-256 (<see cref="RpcSecurity.PinnedCertificate"/>).</summary>
internal sealed class PinnedCertificateSecurity(byte[] certificateSha256) : RpcSecurity
{
    public override bool UsesTls => true;

    public override string Description => "TLS to a pinned certificate";

    internal override ReadOnlySpan<byte> TicketKey => throw new InvalidOperationException("A client pinning a certificate holds no cluster key.");

    public override bool TryAuthenticate(HttpContext context, out string failure) => throw new InvalidOperationException("A client pinning a certificate cannot serve.");

    internal override void ConfigureListener(ListenOptions listen) => throw new InvalidOperationException("A client pinning a certificate cannot serve.");

    internal override void ConfigureClient(SocketsHttpHandler handler) => handler.SslOptions = new SslClientAuthenticationOptions
    {
        // The pin replaces the name and chain checks: the certificate is self-signed and names nothing.
        RemoteCertificateValidationCallback = (_, presented, _, _) =>
            presented is not null && CryptographicOperations.FixedTimeEquals(SHA256.HashData(presented.GetRawCertData()), certificateSha256),
        EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    };
}

/// <summary>Makes the self-signed certificates of rank endpoints.</summary>
internal static class EphemeralCertificate
{
    public static X509Certificate2 Create()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=PMPI rank endpoint", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1", "Server Authentication")], critical: false));
        var now = DateTimeOffset.UtcNow;
        using var certificate = request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(30));
        // Windows' TLS stack cannot use a key that lives only in memory; a PKCS#12 round trip gives it one it can.
        return OperatingSystem.IsWindows() ? X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pkcs12), password: null) : new X509Certificate2(certificate);
    }
}
