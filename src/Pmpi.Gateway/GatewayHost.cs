using System.Net;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Pmpi.Gateway.Internal;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway;

/// <summary>
/// A running gateway: an ASP.NET Core host whose Kestrel endpoint serves the Gateway service (jobs registered by
/// masters, counters), relays control calls between domains with YARP's forwarder, and answers GET /health; on the
/// same port, connections that start with a relay preamble are taken off before Kestrel and relayed as opaque bytes
/// to the next hop of a rank stream (<see cref="OpaqueRelay"/>). It listens
/// with the cluster credential (mutual TLS) or, with --insecure, in cleartext, and with the limits of every PMPI
/// endpoint (connections per listener and per address, idle and header timeouts; rank-stream windows).
/// </summary>
public sealed class GatewayHost : IAsyncDisposable
{
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(10);

    private readonly WebApplication _app;
    private readonly List<TunnelDialer> _dialers = [];
    private int _disposed;

    private GatewayHost(WebApplication app, Uri address, GatewayCounters counters)
    {
        _app = app;
        Address = address;
        Counters = counters;
    }

    /// <summary>Where it listens, e.g. https://10.9.0.1:7400 (the real port when 0 was asked for; a wildcard bind as 127.0.0.1).</summary>
    public Uri Address { get; }

    /// <summary>What it has relayed.</summary>
    public GatewayCounters Counters { get; }

    /// <summary>Builds and starts a gateway.</summary>
    /// <param name="configure">Sets the options (<see cref="GatewayOptions"/> states the defaults).</param>
    /// <param name="configureHost">Adjusts the host before it is built: logging providers (none by default), a service manager's lifetime.</param>
    /// <param name="cancellationToken">Abandons the start.</param>
    /// <exception cref="ArgumentException">An option holds a bad value; the message names its flag.</exception>
    /// <exception cref="IOException">The endpoint could not be bound.</exception>
    public static async Task<GatewayHost> StartAsync(Action<GatewayOptions> configure, Action<IHostApplicationBuilder>? configureHost = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(configure);
        var options = new GatewayOptions();
        configure(options);
        if (options.Problems().ToList() is { Count: > 0 } problems) throw new ArgumentException(string.Join(Environment.NewLine, problems));
        var security = options.Security!;

        var builder = RpcServer.CreateBuilder();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.ListenGrpc(IPAddress.Parse(options.BindAddress), options.Port, security, RpcServerLimits.Default));
        // Kestrel reads a socket one pool block at a time: 64 KB blocks, as rank endpoints use, instead of 4 KB.
        builder.Services.AddSingleton<IMemoryPoolFactory<byte>, LargeBlockMemoryPool.Factory>();
        builder.Services.AddHttpForwarder();
        // One count of refusals for the calls and the listener (connections, TLS handshakes), which finds it here.
        RefusalLog.TryAddTo(builder.Services);
        builder.Services.AddSingleton(options);
        builder.Services.AddSingleton<GatewayCounters>();
        builder.Services.AddSingleton(new JobDirectory(security, options.Domain, options.MaxJobs));
        builder.Services.AddSingleton<TunnelListener>();
        builder.Services.AddSingleton(provider => new HopClients(security, provider.GetRequiredService<TunnelListener>()));
        builder.Services.AddSingleton<HopForwarder>();
        builder.Services.AddSingleton<OpaqueRelay>();
        // Registered after Kestrel's socket transport, so it is the one Kestrel binds with: it takes the relayed
        // connections off the port before Kestrel sees them.
        builder.Services.AddSingleton<IConnectionListenerFactory, RelayingListenerFactory>();
        builder.Services.AddSingleton<ControlRelay>();
        builder.Services.AddSingleton<GatewayService>();
        builder.Services.AddDaemonGrpc([.. GatewayReflection.Descriptor.Services])
            .AddMethodTable<GatewayService>(Rpc.V1.Gateway.Descriptor, table => table
                .Unary<RegisterJobRequest, RegisterJobReply>("RegisterJob", (gateway, request, context) => gateway.RegisterJob(request, context))
                .Unary<RemoveJobRequest, RemoveJobReply>("RemoveJob", (gateway, request, context) => gateway.RemoveJob(request, context))
                .Unary<GetStatusRequest, GatewayStatus>("GetStatus", (gateway, request, context) => gateway.GetStatus(request, context)))
            .AddServiceOptions<GatewayService>(service => service.MaxReceiveMessageSize = GatewayService.MaxRequestSize);
        configureHost?.Invoke(builder);
        var app = builder.Build();
        try
        {
            // A control call for another domain is relayed whatever its method; the endpoints below serve the rest.
            app.Use(app.Services.GetRequiredService<ControlRelay>().InvokeAsync);
            app.MapPost(ServicePaths.Connect, context => RefuseHttp2RankStream(context, app.Services.GetRequiredService<HopForwarder>()));
            app.MapPost(TunnelListener.Path, app.Services.GetRequiredService<TunnelListener>().AcceptAsync);
            // Members only, checked before a request byte is read.
            app.MapGrpcService<GatewayService>().RequireCaller(app.Services.GetRequiredService<GatewayService>().RequireMember);
            app.MapGrpcHealthAndReflection();
            // For service managers and load balancers: alive and serving; reveals nothing else.
            app.MapGet("/health", context => context.Response.WriteAsync("ok\n"));
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
            var bound = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
            var address = new Uri(bound.Replace("[::]", "127.0.0.1", StringComparison.Ordinal).Replace("0.0.0.0", "127.0.0.1", StringComparison.Ordinal));
            var logger = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Pmpi.Gateway");
            GatewayLog.Listening(logger, options.Domain, address);
            if (security == RpcSecurity.Insecure) GatewayLog.Insecure(logger, address);
            var host = new GatewayHost(app, address, app.Services.GetRequiredService<GatewayCounters>());
            // Loopback: where a tunnel's connection meets this gateway's own endpoint.
            var self = new IPEndPoint(IPAddress.Parse(address.DnsSafeHost), address.Port);
            foreach (var peer in options.DialOut)
                host._dialers.Add(new TunnelDialer(security.AddressOf(peer), self, app.Services.GetRequiredService<HopClients>(), options.Domain, logger));
            return host;
        }
        catch
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>
    /// A rank stream sent as an HTTP/2 call to the gateway (as ranks did before the opaque relay) is refused with a
    /// status that says how streams cross gateways now.
    /// </summary>
    private static Task RefuseHttp2RankStream(HttpContext context, HopForwarder forwarder)
    {
        if (HopForwarder.IsGrpc(context))
            forwarder.Refuse(context, "RankTransport.Connect", StatusCode.FailedPrecondition,
                "a rank stream crosses gateways as a TCP connection that starts with a relay preamble (PMPIRLY1), not as an HTTP/2 call; the calling rank runs an older PMPI");
        return Task.CompletedTask;
    }

    /// <summary>Completes when the host is asked to stop: SIGTERM, Ctrl+C, or the service manager.</summary>
    public Task WaitForShutdownRequestAsync(CancellationToken cancellationToken = default) => _app.Lifetime.WaitForStopRequestAsync(cancellationToken);

    /// <summary>Stops serving (relayed streams get up to 10 s) and releases the host and its clients.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        foreach (var dialer in _dialers) await dialer.DisposeAsync().ConfigureAwait(false);
        using var grace = new CancellationTokenSource(StopTimeout);
        await _app.StopAsync(grace.Token).ConfigureAwait(false);
        _app.Services.GetRequiredService<HopClients>().Dispose();
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
