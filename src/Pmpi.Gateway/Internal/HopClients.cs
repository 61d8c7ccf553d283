using System.Collections.Concurrent;
using System.Net.Http;
using Pmpi.Rpc.Security;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// The HTTP/2 clients a gateway forwards control calls with, one per next hop: a cluster member, i.e. a peer gateway,
/// an agent or a master (mutual TLS with this gateway's credential). Every call to one peer gateway shares its
/// connections. (Rank streams are not forwarded here but relayed as opaque bytes, <see cref="OpaqueRelay"/>.)
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
            // The rank endpoints' stream window, so a relayed large call does not wait on WINDOW_UPDATEs.
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

    public void Dispose()
    {
        foreach (var client in _clients.Values) client.Dispose();
        _clients.Clear();
    }
}
