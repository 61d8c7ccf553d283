using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Pmpi.Rpc.Security.Internal;

/// <summary>
/// A rank's endpoint (<see cref="RpcSecurity.RankEndpoint"/>): TLS with a certificate made at the rank's start,
/// requiring a client certificate that is a peer's (pinned from the rank table). The handshake decides before HTTP/2
/// begins, so a stranger is never granted the endpoint's wide windows.
/// </summary>
internal sealed class RankEndpointSecurity(X509Certificate2 certificate, Task<Func<string, bool>> peerPins) : RpcSecurity
{
    public override bool UsesTls => true;

    public override string Description => "TLS between ranks' pinned certificates";

    internal override ReadOnlySpan<byte> TicketKey => throw new InvalidOperationException("A rank endpoint holds no cluster key.");

    internal override X509Certificate2 OwnCertificate => certificate;

    /// <summary>The handshake admitted only peers; the Hello's job key is checked by the endpoint itself.</summary>
    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure)
    {
        failure = "";
        return true;
    }

    internal override Func<Action<string>, SslServerAuthenticationOptions> DaemonListenerTls() =>
        throw new InvalidOperationException("A rank endpoint serves through GrpcStreamListener, which takes its TLS from ServerTlsAsync.");

    internal override SslClientAuthenticationOptions ClientTls() =>
        throw new InvalidOperationException("A rank endpoint dials its peers through DialingPinned, which pins each one's certificate.");

    internal override async ValueTask<SslServerAuthenticationOptions> ServerTlsAsync(CancellationToken cancellationToken)
    {
        // The peers are known once the rank table arrives; a peer that got it first waits here, inside the handshake
        // timeout, rather than being refused.
        var peers = await peerPins.WaitAsync(cancellationToken).ConfigureAwait(false);
        return new SslServerAuthenticationOptions
        {
            ServerCertificate = certificate,
            ClientCertificateRequired = true,
            // Self-signed rank certificates vouch for nothing but their pin.
            RemoteCertificateValidationCallback = (_, presented, _, _) => presented is not null && peers(Convert.ToHexString(SHA256.HashData(presented.GetRawCertData()))),
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            ApplicationProtocols = [SslApplicationProtocol.Http2],
            EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
        };
    }
}

/// <summary>A client accepting one server certificate, by its SHA-256, and presenting its own (<see cref="RpcSecurity.DialingPinned"/>).</summary>
internal sealed class PinnedCertificateSecurity(byte[] certificateSha256, X509Certificate2 clientCertificate) : RpcSecurity
{
    public override bool UsesTls => true;

    public override string Description => "TLS to a pinned certificate";

    internal override ReadOnlySpan<byte> TicketKey => throw new InvalidOperationException("A client pinning a certificate holds no cluster key.");

    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure) => throw new InvalidOperationException("A client pinning a certificate cannot serve.");

    internal override Func<Action<string>, SslServerAuthenticationOptions> DaemonListenerTls() => throw new InvalidOperationException("A client pinning a certificate cannot serve.");

    internal override SslClientAuthenticationOptions ClientTls() => new()
    {
        ClientCertificates = [clientCertificate],
        LocalCertificateSelectionCallback = (_, _, _, _, _) => clientCertificate,
        // The pin replaces the name and chain checks: the certificate is self-signed and names nothing.
        RemoteCertificateValidationCallback = (_, presented, _, _) =>
            presented is not null && CryptographicOperations.FixedTimeEquals(SHA256.HashData(presented.GetRawCertData()), certificateSha256),
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    };
}

/// <summary>Makes the self-signed certificates of rank endpoints, which serve and also present themselves to peers.</summary>
internal static class EphemeralCertificate
{
    public static X509Certificate2 Create()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=PMPI rank endpoint", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
            [new Oid("1.3.6.1.5.5.7.3.1", "Server Authentication"), new Oid("1.3.6.1.5.5.7.3.2", "Client Authentication")], critical: false));
        var now = DateTimeOffset.UtcNow;
        using var certificate = request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(30));
        // Windows' TLS stack cannot use a key that lives only in memory; a PKCS#12 round trip gives it one it can.
        return OperatingSystem.IsWindows() ? X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pkcs12), password: null) : new X509Certificate2(certificate);
    }
}
