using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// The dialing side of a tunnel (<c>pmpi gateway --dial-out HOST:PORT</c>), for a gateway that cannot be dialed by its
/// peer: it keeps one call parked at the peer (<see cref="TunnelListener"/>). When the peer answers it, the call
/// carries a connection the peer opens to this gateway: its bytes go to this gateway's own endpoint over loopback, so
/// the connection is served (TLS, the peer's client certificate, every check) exactly as one dialed directly, and a
/// new call is parked at once. The call rides the same HTTP/2 connection as this gateway's own streams to the peer,
/// so traffic both ways crosses on a connection this side opened. A peer that cannot be reached is retried with a
/// backoff of up to 30 s.
/// </summary>
internal sealed class TunnelDialer : IAsyncDisposable
{
    private static readonly TimeSpan FirstRetry = TimeSpan.FromSeconds(1), LastRetry = TimeSpan.FromSeconds(30);

    private readonly Uri _peer;
    private readonly IPEndPoint _self;
    private readonly HopClients _clients;
    private readonly string _domain;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _carrying = [];
    private readonly Task _dialing;

    /// <param name="peer">The peer gateway's address (https://host:port).</param>
    /// <param name="self">This gateway's own endpoint, as dialed over loopback.</param>
    /// <param name="clients">The clients this gateway forwards with: the tunnel shares the one for the peer.</param>
    /// <param name="domain">This gateway's domain, which the peer reaches through the tunnel.</param>
    /// <param name="logger">Where a failed dial is reported.</param>
    public TunnelDialer(Uri peer, IPEndPoint self, HopClients clients, string domain, ILogger logger)
    {
        (_peer, _self, _clients, _domain, _logger) = (peer, self, clients, domain, logger);
        _dialing = DialAsync(_stop.Token);
    }

    private async Task DialAsync(CancellationToken stop)
    {
        var retry = FirstRetry;
        while (!stop.IsCancellationRequested)
        {
            var body = new StreamingContent("application/octet-stream");
            var request = new HttpRequestMessage(HttpMethod.Post, new Uri(_peer, TunnelListener.Path))
            {
                Version = HttpVersion.Version20,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                Content = body,
            };
            request.Headers.TryAddWithoutValidation(TunnelListener.DomainHeader, _domain);
            HttpResponseMessage response;
            try
            {
                // Returns once the peer answers: when a connection of its takes this call, which may be hours away.
                response = await _clients.ForMember(_peer.GetLeftPart(UriPartial.Authority)).SendAsync(request, stop).ConfigureAwait(false);
                if (!response.IsSuccessStatusCode)
                {
                    response.Dispose();
                    throw new HttpRequestException($"it answered {(int)response.StatusCode} (its log says why)");
                }
            }
            catch (Exception e) when (e is HttpRequestException or IOException)
            {
                body.Dispose();
                GatewayLog.TunnelDialFailed(_logger, _peer, e.Message, retry.TotalSeconds);
                try
                {
                    await Task.Delay(retry, stop).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                retry = TimeSpan.FromTicks(Math.Min(retry.Ticks * 2, LastRetry.Ticks));
                continue;
            }
            catch (OperationCanceledException)
            {
                body.Dispose();
                return;
            }
            retry = FirstRetry;
            lock (_carrying)
            {
                _carrying.RemoveAll(task => task.IsCompleted);
                _carrying.Add(CarryAsync(response, body, stop));
            }
        }
    }

    /// <summary>Pumps the connection the peer runs inside the call to this gateway's own endpoint and back, until either side ends.</summary>
    private async Task CarryAsync(HttpResponseMessage response, StreamingContent body, CancellationToken stop)
    {
        using var local = new Socket(_self.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await local.ConnectAsync(_self, stop).ConfigureAwait(false);
            await using var socket = new NetworkStream(local, ownsSocket: false);
            var fromPeer = await response.Content.ReadAsStreamAsync(stop).ConfigureAwait(false);
            var toPeer = await body.Stream.WaitAsync(stop).ConfigureAwait(false);
            await Task.WhenAny(PumpAsync(fromPeer, socket, stop), PumpAsync(socket, toPeer, stop)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or HttpRequestException or OperationCanceledException or ObjectDisposedException)
        {
            // The connection inside ended or broke: its ends find out by themselves (TLS, HTTP/2 pings).
        }
        finally
        {
            body.Dispose();
            response.Dispose();
        }
    }

    /// <summary>Copies until the source ends, flushing each piece: the bytes are TLS records another side waits for.</summary>
    private static async Task PumpAsync(Stream from, Stream to, CancellationToken stop)
    {
        var buffer = new byte[64 * 1024];
        try
        {
            int read;
            while ((read = await from.ReadAsync(buffer, stop).ConfigureAwait(false)) > 0)
            {
                await to.WriteAsync(buffer.AsMemory(0, read), stop).ConfigureAwait(false);
                await to.FlushAsync(stop).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is IOException or SocketException or HttpRequestException or OperationCanceledException or ObjectDisposedException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _dialing.ConfigureAwait(false);
        Task[] carrying;
        lock (_carrying) carrying = [.. _carrying];
        await Task.WhenAll(carrying).ConfigureAwait(false);
        _stop.Dispose();
    }
}
