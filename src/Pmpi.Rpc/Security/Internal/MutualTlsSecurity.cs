using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Security.Internal;

/// <summary>Mutual TLS under the cluster CA (<see cref="RpcSecurity.MutualTls"/>).</summary>
internal sealed class MutualTlsSecurity(ClusterCredentials credentials) : RpcSecurity
{
    private readonly Lazy<SslStreamCertificateContext> _serverCertificate = new(() => SslStreamCertificateContext.Create(credentials.Certificate, additionalCertificates: null, offline: true));

    public override bool UsesTls => true;

    public override string Description => $"mutual TLS under {credentials.Authority.Subject}";

    internal override ReadOnlySpan<byte> TicketKey => credentials.ClusterKey;

    internal override X509Certificate2 Authority => credentials.Authority;

    internal override X509Certificate2 OwnCertificate => credentials.Certificate;

    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure)
    {
        // A presented certificate was already checked against the cluster CA during the handshake (a foreign one
        // ends it); a connection without one reaches only the methods that take a job key instead.
        if (caller.PresentedCertificate)
        {
            failure = "";
            return true;
        }
        failure = "no client certificate of this cluster was presented";
        return false;
    }

    // Options per connection, so that the certificate check can say in the log whom it refused and why.
    internal override Func<Action<string>, SslServerAuthenticationOptions> DaemonListenerTls() => ServerTls;

    private SslServerAuthenticationOptions ServerTls(Action<string> refuseCertificate) => new()
    {
        ServerCertificateContext = _serverCertificate.Value,
        // Asked for, not required: ranks hold no certificate and prove themselves with their job key instead.
        ClientCertificateRequired = true,
        RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is null || AcceptClient(certificate, refuseCertificate),
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    };

    private bool AcceptClient(X509Certificate certificate, Action<string> refuseCertificate)
    {
        var presented = certificate as X509Certificate2 ?? X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        if (ClusterCredentials.ChainsTo(presented, credentials.Authority)) return true;
        refuseCertificate($"its client certificate ({LogText.Printable(presented.Subject)}) does not chain to the cluster CA {credentials.Authority.Subject}");
        return false;
    }

    internal override SslClientAuthenticationOptions ClientTls() => new()
    {
        ClientCertificates = [credentials.Certificate],
        LocalCertificateSelectionCallback = (_, _, _, _, _) => credentials.Certificate,
        RemoteCertificateValidationCallback = (_, certificate, _, errors) => ServerCertificates.Accept(certificate, errors, credentials.Authority, checkName: true),
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    };
}

/// <summary>A client's check of a server certificate: it chains to the cluster CA alone, and names the dialled address when asked.</summary>
internal static class ServerCertificates
{
    public static bool Accept(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2 authority, bool checkName)
    {
        // The system's roots do not vouch for a cluster certificate (RemoteCertificateChainErrors is expected and
        // replaced by the check against the cluster CA); a missing certificate, or a wrong name when checked, is fatal.
        if (certificate is null || (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0) return false;
        if (checkName && (errors & SslPolicyErrors.RemoteCertificateNameMismatch) != 0) return false;
        return ClusterCredentials.ChainsTo(certificate as X509Certificate2 ?? X509CertificateLoader.LoadCertificate(certificate.GetRawCertData()), authority);
    }
}

/// <summary>
/// A client trusting the cluster CA without presenting a certificate (<see cref="RpcSecurity.TrustingAuthority"/>).
/// Any certificate of the cluster will do: a rank reaches its master at the address its agent advertises (the rank
/// address), which that node's certificate need not name.
/// </summary>
internal sealed class AuthorityTrustSecurity(X509Certificate2 authority) : RpcSecurity
{
    public override bool UsesTls => true;

    public override string Description => $"TLS trusting {authority.Subject}";

    internal override ReadOnlySpan<byte> TicketKey => throw new InvalidOperationException("A client that only trusts the CA holds no cluster key.");

    internal override X509Certificate2 Authority => authority;

    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure) =>
        throw new InvalidOperationException("A client that only trusts the CA cannot serve.");

    internal override Func<Action<string>, SslServerAuthenticationOptions> DaemonListenerTls() => throw new InvalidOperationException("A client that only trusts the CA cannot serve.");

    internal override SslClientAuthenticationOptions ClientTls() => new()
    {
        RemoteCertificateValidationCallback = (_, certificate, _, errors) => ServerCertificates.Accept(certificate, errors, authority, checkName: false),
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
    };
}
