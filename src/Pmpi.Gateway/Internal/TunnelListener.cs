using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// The gateways that reach this one only by dialing out (`pmpi gateway --dial-out`, behind NAT or a firewall that
/// lets nothing in): each keeps a long-lived HTTP/2 call parked here (<see cref="TunnelDialer"/>). When this gateway
/// needs a connection to such a domain's gateway, it takes a parked call and runs the connection inside it, this side
/// the client, so relayed streams and calls for that domain ride a connection the other side opened. A domain that has
/// dialed in is reached this way from then on. Only cluster members may park calls, and at most
/// <see cref="MaxTunnels"/> live at once.
/// </summary>
internal sealed class TunnelListener(GatewayOptions options, IHostApplicationLifetime lifetime, RefusalLog refusals, ILogger<TunnelListener> logger)
{
    /// <summary>The path a dialing gateway posts its call to; not a gRPC method, since the body is a connection's bytes.</summary>
    public const string Path = "/pmpi/v1/tunnel";

    /// <summary>The domain whose gateway dials.</summary>
    public const string DomainHeader = "pmpi-tunnel-domain";

    /// <summary>Tunnels parked or carrying a connection at once, over all domains: what a member can make this gateway hold.</summary>
    public const int MaxTunnels = 256;

    private readonly ConcurrentDictionary<string, Channel<ParkedTunnel>> _parked = new(StringComparer.Ordinal);
    private int _live;

    /// <summary>Calls parked here now, waiting for or carrying a connection.</summary>
    public int Open => Volatile.Read(ref _live);

    /// <summary>Whether <paramref name="domain"/>'s gateway has dialed in, so that it is reached through its tunnels.</summary>
    public bool Serves(string domain) => _parked.ContainsKey(domain);

    /// <summary>Parks a dialing gateway's call until a connection takes it, then holds it for that connection's life.</summary>
    public async Task AcceptAsync(HttpContext context)
    {
        var peer = $"{context.Connection.RemoteIpAddress}:{context.Connection.RemotePort}";
        if (!options.Security!.TryAuthenticate(context, out var failure))
        {
            GatewayLog.Refused(logger, refusals, context, "tunnel", "tunnel calls (unauthenticated)", failure);
            context.Response.StatusCode = StatusCodes.Status403Forbidden;
            return;
        }
        AdmittedConnection.MarkAuthenticated(context);
        var domain = context.Request.Headers[DomainHeader].ToString();
        if (domain.Length is 0 or > 255 || domain == options.Domain || domain.Any(char.IsControl))
        {
            GatewayLog.Refused(logger, refusals, context, "tunnel", "tunnel calls (bad domain)", $"{DomainHeader} names no other domain");
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        if (Interlocked.Increment(ref _live) > MaxTunnels)
        {
            Interlocked.Decrement(ref _live);
            GatewayLog.Refused(logger, refusals, context, "tunnel", "tunnel calls (over the limit)", $"{MaxTunnels} tunnels are open already");
            context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
            return;
        }
        try
        {
            var tunnel = new ParkedTunnel(context);
            Parked(domain).Writer.TryWrite(tunnel);
            GatewayLog.TunnelParked(logger, domain, peer);
            // A stopping gateway ends every call at once: the connections inside would hold its stop for the whole grace period.
            using var over = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, lifetime.ApplicationStopping);
            await tunnel.Ended.WaitAsync(over.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The dialing gateway went away, or this one stops: parked, the call is skipped; carrying, the connection inside it breaks.
        }
        finally
        {
            Interlocked.Decrement(ref _live);
        }
    }

    /// <summary>A connection to <paramref name="domain"/>'s gateway, inside one of its parked calls; waits for one until cancelled (the connect timeout).</summary>
    public async ValueTask<Stream> ConnectAsync(string domain, CancellationToken cancellationToken)
    {
        var parked = Parked(domain).Reader;
        while (true)
        {
            ParkedTunnel tunnel;
            try
            {
                tunnel = await parked.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException e)
            {
                throw new IOException($"The gateway of domain '{domain}' dials out to this one, and no call of its is open to carry a connection.", e);
            }
            if (await tunnel.TakeAsync(cancellationToken).ConfigureAwait(false) is { } stream) return stream;
        }
    }

    /// <summary>The calls <paramref name="domain"/>'s gateway parked here, in order.</summary>
    private Channel<ParkedTunnel> Parked(string domain) => _parked.GetOrAdd(domain, _ => Channel.CreateUnbounded<ParkedTunnel>());

    /// <summary>A dialing gateway's call, waiting to carry a connection.</summary>
    private sealed class ParkedTunnel(HttpContext context)
    {
        private readonly TaskCompletionSource _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _taken;

        public Task Ended => _ended.Task;

        /// <summary>Answers the call (which tells the dialer it carries a connection now) and returns its bodies as the connection; null when the call is over.</summary>
        public async Task<Stream?> TakeAsync(CancellationToken cancellationToken)
        {
            if (context.RequestAborted.IsCancellationRequested || Interlocked.Exchange(ref _taken, 1) != 0) return null;
            try
            {
                context.Response.ContentType = "application/octet-stream";
                await context.Response.StartAsync(cancellationToken).ConfigureAwait(false);
                await context.Response.Body.FlushAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is IOException or InvalidOperationException or OperationCanceledException)
            {
                _ended.TrySetResult();
                return null;
            }
            return new TunnelStream(context.Request.Body, context.Response.Body, () => _ended.TrySetResult());
        }
    }
}
