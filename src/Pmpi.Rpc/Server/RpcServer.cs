using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Pmpi.Rpc.Server;

/// <summary>
/// A Kestrel server speaking gRPC over cleartext HTTP/2 (h2c) on one address, with the limits long-lived streams
/// need. Every PMPI endpoint (rank, agent, master) is one of these.
/// </summary>
public sealed class RpcServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private RpcServer(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
    }

    /// <summary>The address clients call, e.g. http://127.0.0.1:41234 (the real port when 0 was asked for).</summary>
    public Uri Address { get; }

    /// <summary>The server's services, for whoever maps endpoints needing them.</summary>
    public IServiceProvider Services => _app.Services;

    /// <summary>Starts a server on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port) with the given methods.</summary>
    public static async Task<RpcServer> StartAsync(IPAddress address, int port, Action<IEndpointRouteBuilder> mapMethods,
        Action<IServiceCollection>? configureServices = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(mapMethods);
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.Limits.MaxRequestBodySize = null;
            kestrel.Limits.MinRequestBodyDataRate = null;
            kestrel.Limits.MinResponseDataRate = null;
            // Large windows keep a 1 Gbit+ stream busy without waiting for WINDOW_UPDATEs (defaults: 1 MB / 768 KB).
            kestrel.Limits.Http2.InitialConnectionWindowSize = 32 * 1024 * 1024;
            kestrel.Limits.Http2.InitialStreamWindowSize = 16 * 1024 * 1024;
            kestrel.Limits.Http2.MaxStreamsPerConnection = 1000;
            kestrel.Limits.Http2.KeepAlivePingDelay = TimeSpan.FromSeconds(30);
            kestrel.Limits.Http2.KeepAlivePingTimeout = TimeSpan.FromSeconds(60);
            kestrel.Listen(address, port, listen => listen.Protocols = HttpProtocols.Http2);
        });
        configureServices?.Invoke(builder.Services);
        var app = builder.Build();
        mapMethods(app);
        app.MapGrpcUnimplemented();
        await app.StartAsync(cancellationToken).ConfigureAwait(false);
        var bound = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        return new RpcServer(app, new Uri(bound.Replace("[::]", "127.0.0.1", StringComparison.Ordinal)));
    }

    /// <summary>Stops accepting calls and ends the running ones.</summary>
    public async ValueTask DisposeAsync()
    {
        using var grace = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        await _app.StopAsync(grace.Token).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
