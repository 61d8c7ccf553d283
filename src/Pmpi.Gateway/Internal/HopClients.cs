using System.Collections.Concurrent;
using System.Net.Http;
using Pmpi.Rpc.Security;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// The HTTP/2 clients a gateway forwards with, one per next hop: a cluster member, i.e. a peer gateway, an agent or a
/// master (mutual TLS with this gateway's credential), or a rank endpoint (its pinned certificate, presenting this gateway's credential, which the rank
/// admits as its domain's gateway; or h2c on a loopback or insecure cluster). Every stream to one peer gateway
/// shares its connections, so many rank pairs ride few HTTP/2 connections between two domains.
/// </summary>
internal sealed class HopClients(RpcSecurity security, TunnelListener tunnels) : IDisposable
{
    private readonly ConcurrentDictionary<(string Address, string Pin), HttpMessageInvoker> _clients = new();

    /// <summary>The client for a cluster member: a peer gateway, or (relaying control calls) an agent or a master.</summary>
    public HttpMessageInvoker ForMember(string address) => _clients.GetOrAdd((address, ""), key => Create(key.Address, security));

    /// <summary>
    /// The client for the gateway of <paramref name="domain"/> at <paramref name="address"/>: through the calls it
    /// parked here when it dials out (<see cref="TunnelListener"/>), else dialed directly.
    /// </summary>
    public HttpMessageInvoker ForGateway(string domain, string address) => tunnels.Serves(domain)
        ? _clients.GetOrAdd((address, "tunnel"), key => Create(key.Address, security, (_, cancellationToken) => tunnels.ConnectAsync(domain, cancellationToken)))
        : ForMember(address);

    /// <summary>The client for a rank endpoint; <paramref name="pin"/> is its certificate's SHA-256, empty for h2c.</summary>
    public HttpMessageInvoker ForRank(string address, ReadOnlySpan<byte> pin) =>
        pin.IsEmpty ? _clients.GetOrAdd((address, "h2c"), key => Create(key.Address, RpcSecurity.Insecure))
            : _clients.GetOrAdd((address, Convert.ToHexString(pin)), key => Create(key.Address, security.DialingPinned(Convert.FromHexString(key.Pin))));

    private static HttpMessageInvoker Create(string address, RpcSecurity hop, Func<SocketsHttpConnectionContext, CancellationToken, ValueTask<Stream>>? connect = null)
    {
        var handler = new SocketsHttpHandler
        {
            // What YARP asks of a forwarding client: no proxy, no redirects, no decompression, no cookies.
            UseProxy = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = System.Net.DecompressionMethods.None,
            UseCookies = false,
            ActivityHeadersPropagator = null,
            // Past the peer's MaxStreamsPerConnection (1,000), open another connection rather than queue streams.
            EnableMultipleHttp2Connections = true,
            // The rank endpoints' stream window, so a relayed large message does not wait on WINDOW_UPDATEs.
            InitialHttp2StreamWindowSize = 16 * 1024 * 1024,
            KeepAlivePingDelay = TimeSpan.FromSeconds(30),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(60),
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
        };
        // A tunnel: the connection runs inside a call the peer parked here (TLS and HTTP/2 on top, as on a socket).
        if (connect is not null) handler.ConnectCallback = connect;
        hop.CheckAddress(new Uri(address));
        hop.ConfigureClient(handler);
        return new HttpMessageInvoker(handler);
    }

    /// <summary>Forgets the clients of one job's rank endpoints (the next job's ranks listen elsewhere).</summary>
    public void ForgetRanks(IEnumerable<string> endpoints)
    {
        foreach (var endpoint in endpoints)
        {
            foreach (var key in _clients.Keys.Where(key => key.Address == endpoint && key.Pin.Length > 0))
                if (_clients.TryRemove(key, out var client)) client.Dispose();
        }
    }

    public void Dispose()
    {
        foreach (var client in _clients.Values) client.Dispose();
        _clients.Clear();
    }
}
