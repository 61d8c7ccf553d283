using System.Net;
using System.Net.Http;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Pmpi.Rpc.Security.Internal;

namespace Pmpi.Rpc.Security;

/// <summary>
/// How an endpoint and its callers prove that they belong to the cluster, and how their traffic is protected. The
/// same value configures a server (a daemon's listener on Kestrel, through Pmpi.Rpc.Kestrel, or a rank's endpoint) and
/// a client (SocketsHttpHandler's TLS, and a signature per request). docs/security.md states the model.
/// </summary>
public abstract class RpcSecurity
{
    private protected RpcSecurity()
    {
    }

    /// <summary>
    /// No encryption and no authentication: cleartext h2c, every caller accepted. Only for a machine and network the
    /// user alone controls (`--insecure`). Job tickets are signed with a public all-zero key, so they prove nothing.
    /// </summary>
    public static RpcSecurity Insecure { get; } = new InsecureSecurity();

    /// <summary>
    /// Mutual TLS under the cluster CA: HTTP/2 over TLS (ALPN h2); a server presents the node certificate and accepts
    /// only client certificates chaining to the CA (a caller without one is connected but not a member); a client
    /// presents the node certificate and accepts only a server certificate chaining to the CA and naming the address
    /// it dialled. Tickets are signed with the cluster key.
    /// </summary>
    public static RpcSecurity MutualTls(ClusterCredentials credentials)
    {
        ArgumentNullException.ThrowIfNull(credentials);
        return new MutualTlsSecurity(credentials);
    }

    /// <summary>
    /// Cleartext h2c on loopback with every request signed: HMAC-SHA256 under <paramref name="secret"/> over the
    /// method's path, a timestamp and a nonce, accepted within 30 s and once. The shape of `pmpi run`'s embedded
    /// agent and master, whose secret lives only in the process's memory (<see cref="ForThisProcess"/>).
    /// </summary>
    /// <param name="secret">At least 32 bytes; also the key that signs job tickets.</param>
    public static RpcSecurity SignedRequests(ReadOnlySpan<byte> secret)
    {
        if (secret.Length < 32) throw new ArgumentException("A request-signing secret has at least 32 bytes.", nameof(secret));
        return new SignedRequestSecurity(secret.ToArray());
    }

    /// <summary><see cref="SignedRequests"/> under a secret drawn now from <see cref="RandomNumberGenerator"/>, never stored.</summary>
    public static RpcSecurity ForThisProcess() => SignedRequests(RandomNumberGenerator.GetBytes(32));

    /// <summary>
    /// A client that presents no certificate but accepts only a server certificate chaining to
    /// <paramref name="authority"/>: how a rank reaches its master (at the rank address its agent advertises, which
    /// that node's certificate need not name).
    /// </summary>
    public static RpcSecurity TrustingAuthority(X509Certificate2 authority)
    {
        ArgumentNullException.ThrowIfNull(authority);
        return new AuthorityTrustSecurity(authority);
    }

    /// <summary>
    /// A rank's endpoint beyond loopback: TLS with a certificate made now (ECDSA P-256, self-signed, never stored),
    /// which the rank publishes by its SHA-256 (<paramref name="certificateSha256"/>) through its authenticated
    /// Register. A caller must present a client certificate of a peer, whose SHA-256 <paramref name="peerPins"/> admits
    /// (upper-case hex; handshakes wait until the rank table gives them, and a spawn may add more): gateways relay
    /// the peers' own TLS, so no other certificate, not even a cluster member's, opens a stream. Streams then prove
    /// their job with the job key in the Hello. The rank dials its peers with <see cref="DialingPinned"/> on this
    /// security, presenting the same certificate.
    /// </summary>
    public static RpcSecurity RankEndpoint(Task<Func<string, bool>> peerPins, out byte[] certificateSha256)
    {
        ArgumentNullException.ThrowIfNull(peerPins);
        var certificate = EphemeralCertificate.Create();
        certificateSha256 = SHA256.HashData(certificate.RawData);
        return new RankEndpointSecurity(certificate, peerPins);
    }

    /// <summary>
    /// A client to an endpoint known by its certificate's SHA-256 (a rank's), accepting that certificate alone and
    /// presenting this security's own: a rank's (<see cref="RankEndpoint"/>) or the cluster node's (<see cref="MutualTls"/>).
    /// </summary>
    /// <exception cref="InvalidOperationException">This security holds no certificate to present.</exception>
    public RpcSecurity DialingPinned(ReadOnlySpan<byte> certificateSha256)
    {
        if (certificateSha256.Length != SHA256.HashSizeInBytes) throw new ArgumentException("A SHA-256 pin is 32 bytes.", nameof(certificateSha256));
        var own = OwnCertificate ?? throw new InvalidOperationException($"{Description} holds no certificate to present to a rank endpoint.");
        return new PinnedCertificateSecurity(certificateSha256.ToArray(), own);
    }

    /// <summary>The URI scheme of the endpoints this security speaks to: https with TLS, http for h2c.</summary>
    public string Scheme => UsesTls ? Uri.UriSchemeHttps : Uri.UriSchemeHttp;

    /// <summary>Whether traffic goes over TLS.</summary>
    public abstract bool UsesTls { get; }

    /// <summary>Whether a server may listen only on loopback addresses with this security (request signing, which does not encrypt).</summary>
    public virtual bool LoopbackOnly => false;

    /// <summary>A few words for logs and warnings, e.g. "mutual TLS under CN=PMPI cluster CA 1a2b3c4d".</summary>
    public abstract string Description { get; }

    /// <summary>The key that signs job tickets and from which job keys derive.</summary>
    internal abstract ReadOnlySpan<byte> TicketKey { get; }

    /// <summary>The cluster CA that TLS peers' certificates chain to; null for h2c.</summary>
    internal virtual X509Certificate2? Authority => null;

    /// <summary>The certificate this security presents as a client, when it has one.</summary>
    internal virtual X509Certificate2? OwnCertificate => null;

    /// <summary>The address of an endpoint given as host:port, with this security's scheme.</summary>
    public Uri AddressOf(string hostAndPort)
    {
        ArgumentException.ThrowIfNullOrEmpty(hostAndPort);
        return new Uri($"{Scheme}://{hostAndPort}");
    }

    /// <summary>
    /// Whether <paramref name="caller"/> is a cluster member (for a server). <paramref name="failure"/> says why not,
    /// for the refusal and the log; it never contains a secret.
    /// </summary>
    internal abstract bool TryAuthenticate(in CallerEvidence caller, out string failure);

    /// <summary>
    /// A daemon listener's TLS: given what logs a refused client certificate, the options of one handshake; null for h2c.
    /// </summary>
    /// <exception cref="InvalidOperationException">This security is a client's or a rank endpoint's, which serve no daemon.</exception>
    internal virtual Func<Action<string>, SslServerAuthenticationOptions>? DaemonListenerTls() => null;

    /// <summary>Configures a client's handler (TLS: the certificate it presents, the server certificates it accepts).</summary>
    internal void ConfigureClient(SocketsHttpHandler handler)
    {
        if (ClientTls() is { } tls) handler.SslOptions = tls;
    }

    /// <summary>A client's TLS (the certificate it presents, the server certificates it accepts), new each call; null for h2c.</summary>
    internal virtual SslClientAuthenticationOptions? ClientTls() => null;

    /// <summary>A TLS server's options for one handshake (<see cref="Streams.GrpcStreamListener"/>); only a rank endpoint's security serves there.</summary>
    internal virtual ValueTask<SslServerAuthenticationOptions> ServerTlsAsync(CancellationToken cancellationToken) =>
        throw new InvalidOperationException($"{Description} cannot serve a rank endpoint's TLS.");

    /// <summary>Adds whatever proves the caller to a request of <paramref name="path"/> (a signature for request signing).</summary>
    internal virtual void Authenticate(HttpRequestMessage request, string path)
    {
    }

    /// <summary>Throws when <paramref name="address"/> cannot be spoken to with this security (h2c to https, TLS to http).</summary>
    internal void CheckAddress(Uri address)
    {
        if (address.Scheme != Scheme)
            throw new ArgumentException($"{address} is {address.Scheme}, but the security in use ({Description}) speaks {Scheme}: "
                + (UsesTls ? "give the address as https://host:port." : "a TLS endpoint needs the cluster credential (--credentials DIR)."), nameof(address));
    }

    /// <summary>Throws when a server with this security must not listen on <paramref name="address"/>.</summary>
    internal void CheckListenAddress(IPAddress address)
    {
        if (LoopbackOnly && !IPAddress.IsLoopback(address))
            throw new ArgumentException($"{Description} does not encrypt, so it listens on loopback only, not on {address}: give the cluster credential (--credentials DIR) to listen beyond loopback.", nameof(address));
    }
}
