using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// A Kestrel server serving gRPC for .NET services over HTTP/2 on one address, behind the listener a daemon has
/// (<see cref="KestrelGrpcExtensions.ListenGrpc"/>: TLS or h2c as its <see cref="RpcSecurity"/> says, connection
/// admission, the limits long-lived streams need). The daemons build their own hosts with <see cref="CreateBuilder"/>;
/// this one serves whatever services its caller maps, as a stand-in daemon or rank.
/// </summary>
public sealed class RpcServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private RpcServer(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
    }

    /// <summary>The address clients call, e.g. http://127.0.0.1:41234 or https://... (the real port when 0 was asked for).</summary>
    public Uri Address { get; }

    /// <summary>The server's services, for whoever maps endpoints needing them.</summary>
    public IServiceProvider Services => _app.Services;

    /// <summary>Starts a server on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port) with the given services.</summary>
    /// <param name="address">Where to listen.</param>
    /// <param name="port">The TCP port; 0 picks a free one.</param>
    /// <param name="mapMethods">Maps the served services (MapGrpcService); gRPC for .NET answers any other call UNIMPLEMENTED.</param>
    /// <param name="configureServices">Adds or replaces services before the server is built.</param>
    /// <param name="security">TLS and who is accepted; <see cref="RpcSecurity.Insecure"/> (h2c) when null.</param>
    /// <param name="limits">What callers may make the process hold; <see cref="RpcServerLimits.Default"/> when null.</param>
    /// <param name="cancellationToken">Abandons the start.</param>
    public static async Task<RpcServer> StartAsync(IPAddress address, int port, Action<IEndpointRouteBuilder> mapMethods,
        Action<IServiceCollection>? configureServices = null, RpcSecurity? security = null, RpcServerLimits? limits = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(mapMethods);
        var builder = CreateBuilder();
        // The default console lifetime would take SIGINT/SIGTERM from the hosting process (a rank, a CLI) and only
        // stop this server, which nobody runs to completion: the process would ignore the signal. Leave it alone.
        builder.Services.AddSingleton<IHostLifetime, HostedByProcess>();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.ListenGrpc(address, port, security, limits));
        // Kestrel reads a socket one pool block at a time: 64 KB blocks instead of 4 KB cut the receive calls of a
        // large message sixteenfold (registered after Kestrel's default, so it wins; configureServices may replace it).
        builder.Services.AddSingleton<IMemoryPoolFactory<byte>, LargeBlockMemoryPool.Factory>();
        RefusalLog.TryAddTo(builder.Services);
        // Messages as large as PMPI's clients send by default (RpcOptions), not gRPC for .NET's 4 MB.
        builder.Services.AddGrpc(grpc => grpc.MaxReceiveMessageSize = RpcOptions.DefaultMaxMessageSize);
        configureServices?.Invoke(builder.Services);
        var app = builder.Build();
        mapMethods(app);
        await app.StartAsync(cancellationToken).ConfigureAwait(false);
        var bound = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        // A wildcard bind is reachable on loopback; clients need an address they can dial.
        var dialable = bound.Replace("[::]", "127.0.0.1", StringComparison.Ordinal).Replace("0.0.0.0", "127.0.0.1", StringComparison.Ordinal);
        return new RpcServer(app, new Uri(dialable));
    }

    /// <summary>
    /// A slim web application builder for a gRPC endpoint: no logging providers, and no watching of configuration
    /// files. By default every host watches its content root (the working directory) for appsettings changes, which
    /// costs an inotify instance per server on Linux, a per-user resource of 128 by default that a job of many
    /// endpoints in one process (or a few processes) exhausts.
    /// </summary>
    public static WebApplicationBuilder CreateBuilder()
    {
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = ["--hostBuilder:reloadConfigOnChange=false"] });
        builder.Logging.ClearProviders();
        return builder;
    }

    /// <summary>A lifetime that leaves the process's signals to the process: it neither waits at start nor stops anything.</summary>
    private sealed class HostedByProcess : IHostLifetime
    {
        public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }

    /// <summary>Stops accepting calls and ends the running ones.</summary>
    public async ValueTask DisposeAsync()
    {
        using var grace = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        await _app.StopAsync(grace.Token).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
