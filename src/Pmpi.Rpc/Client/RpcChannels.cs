using Grpc.Net.Client;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Client;

/// <summary>
/// Makes the gRPC channels (gRPC for .NET's <see cref="GrpcChannel"/>) that call the daemons' control plane: the
/// agent, master and gateway services of proto/pmpi/v1, through their generated clients
/// (<c>new Master.MasterClient(channel)</c>). Each channel pools HTTP/2 connections to one server over TLS or
/// cleartext, as its <see cref="RpcSecurity"/> says, and proves the caller on every call.
/// </summary>
public static class RpcChannels
{
    /// <summary>A channel to <paramref name="address"/> (https://host:port, or http://host:port for h2c). Dispose it to close its connections.</summary>
    /// <param name="address">The server's base address; its scheme must be the one <paramref name="security"/> speaks.</param>
    /// <param name="security">How the server is checked and this caller proven; <see cref="RpcSecurity.Insecure"/> (h2c, no credential) when null.</param>
    /// <param name="options">Message size limits and pings; <see cref="RpcOptions.Default"/> when null.</param>
    /// <param name="metadata">Request headers every call carries: the route a gateway relays them by (<see cref="ControlRoute"/>) when the server is one.</param>
    /// <exception cref="ArgumentException">The address's scheme is not the one <paramref name="security"/> speaks.</exception>
    public static GrpcChannel For(Uri address, RpcSecurity? security = null, RpcOptions? options = null, IEnumerable<KeyValuePair<string, string>>? metadata = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        security ??= RpcSecurity.Insecure;
        security.CheckAddress(address);
        options ??= RpcOptions.Default;
        var handler = Handler(options, security);
        return GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = new CallHeaders(security, metadata?.ToArray() ?? []) { InnerHandler = handler },
            DisposeHttpClient = true,
            MaxReceiveMessageSize = options.MaxMessageSize,
            MaxSendMessageSize = options.MaxMessageSize,
            // No service config, so no retries: Launch, Submit and Spawn are not idempotent.
            ServiceConfig = null,
        });
    }

    /// <summary>The HTTP/2 handler every control-plane client of PMPI calls through: to one server, TLS as <paramref name="security"/> says.</summary>
    internal static SocketsHttpHandler Handler(RpcOptions options, RpcSecurity security)
    {
        var handler = new SocketsHttpHandler
        {
            // Rank and agent traffic stays inside the cluster (or goes through PMPI's own gateways): never a proxy.
            UseProxy = false,
            // Past the server's MaxStreamsPerConnection, open another connection instead of queueing calls.
            EnableMultipleHttp2Connections = true,
            // Matches the server's 16 MB stream window, so large responses don't wait on WINDOW_UPDATEs.
            InitialHttp2StreamWindowSize = 16 * 1024 * 1024,
            KeepAlivePingDelay = options.PingDelay,
            KeepAlivePingTimeout = options.PingTimeout,
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            // Streams live as long as jobs; an idle connection is kept rather than re-dialled.
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
        };
        security.ConfigureClient(handler);
        return handler;
    }

    /// <summary>Adds the channel's metadata and this caller's per-call credential (a signed request) to every call.</summary>
    private sealed class CallHeaders(RpcSecurity security, KeyValuePair<string, string>[] metadata) : DelegatingHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            foreach (var (name, value) in metadata) request.Headers.TryAddWithoutValidation(name, value);
            security.Authenticate(request, request.RequestUri!.AbsolutePath);
            return base.SendAsync(request, cancellationToken);
        }
    }
}
