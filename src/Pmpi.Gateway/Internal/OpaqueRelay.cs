using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// Relays rank streams as opaque bytes: a connection to the gateway's port that begins with a
/// <see cref="RelayPreamble"/> (<see cref="RelayingListenerFactory"/> finds them) is served in four steps:
/// (1) the preamble is read within <see cref="GatewayOptions.PreambleTimeout"/>;
/// (2) its route is checked against a registered job (<see cref="TryChooseHop"/>): a refusal is answered with its
///     status and reason, then the connection closes;
/// (3) the next hop is dialed: the destination domain's gateway (directly, or through the call it parked here when it
///     dials out), which gets the same preamble and must answer OK, or the destination rank's endpoint;
/// (4) the caller is answered OK and, from then on, every byte is copied both ways unread (the ranks' own TLS and
///     HTTP/2) until both ends close, or either breaks, which closes both.
/// </summary>
internal sealed class OpaqueRelay(JobDirectory jobs, TunnelListener tunnels, GatewayCounters counters, GatewayOptions options, RefusalLog refusals,
    ILogger<OpaqueRelay> logger)
{
    private const string Method = "a relayed rank stream";
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The copy buffer of each direction: the size of a rank endpoint's socket reads, and four times that once a read
    /// fills it (a large message), as the C relays of bench/gateway.sh read: a quarter of the reads, writes and
    /// wake-ups a megabyte, 1 MB through the pair in 1.9 ms instead of 2.6 (docs/bench-log/2026-11-30-gateway-own-poll-loop.md).
    /// A stream that carries small messages keeps the small one.
    /// </summary>
    private const int BufferSize = 64 * 1024, BulkBufferSize = 256 * 1024;

    private int _relaying;

    /// <summary>Rank streams relayed now, or being dialed: at most <see cref="GatewayOptions.MaxRelayedStreams"/>.</summary>
    public int Relaying => Volatile.Read(ref _relaying);

    /// <summary>(1) The preamble of a connection whose first bytes are its magic, or null when it did not arrive whole and well-formed in time (the connection is then closed).</summary>
    public async Task<RelayPreamble?> ReadPreambleAsync(Socket socket, IPEndPoint remote, CancellationToken stopping)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(RelayPreamble.MaxLength);
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            deadline.CancelAfter(options.PreambleTimeout);
            int read = 0, needed = 10;
            string malformed;
            RelayPreamble preamble;
            while (!RelayPreamble.TryRead(buffer.AsSpan(0, read), out preamble, out needed, out malformed))
            {
                if (malformed.Length > 0) break;
                // Exactly the preamble: what follows is the caller's TLS, for the destination.
                int received = await socket.ReceiveAsync(buffer.AsMemory(read, needed - read), SocketFlags.None, deadline.Token).ConfigureAwait(false);
                if (received == 0)
                {
                    malformed = "the connection closed inside the relay preamble";
                    break;
                }
                read += received;
            }
            if (malformed.Length == 0) return preamble;
            await RefuseAsync(socket, remote, StatusCode.InvalidArgument, malformed, stopping).ConfigureAwait(false);
            return null;
        }
        catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
        {
            Refused(remote, $"no whole relay preamble within {options.PreambleTimeout.TotalSeconds:0} s (GatewayOptions.PreambleTimeout)");
            return null;
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            return null;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Steps (2) to (4) for a connection whose preamble was read; returns when the relayed stream has ended. The socket is the caller's to close.</summary>
    public async Task RelayAsync(Socket socket, IPEndPoint remote, RelayPreamble preamble, CancellationToken stopping)
    {
        if (Interlocked.Increment(ref _relaying) > options.MaxRelayedStreams)
        {
            Interlocked.Decrement(ref _relaying);
            await RefuseAsync(socket, remote, StatusCode.ResourceExhausted,
                $"it relays {options.MaxRelayedStreams} rank streams already (GatewayOptions.MaxRelayedStreams)", stopping).ConfigureAwait(false);
            return;
        }
        try
        {
            if (!TryChooseHop(preamble, out var hop, out var route, out var refusal))
            {
                await RefuseAsync(socket, remote, refusal.Code, refusal.Detail, stopping).ConfigureAwait(false);
                return;
            }
            Stream next;
            try
            {
                next = await DialAsync(hop, preamble, stopping).ConfigureAwait(false);
            }
            catch (Exception e) when (e is SocketException or IOException or OperationCanceledException or ObjectDisposedException or RpcException)
            {
                var failure = $"gateway of domain '{options.Domain}' could not relay {route} to {hop.Name} {hop.Address}: "
                    + (e is RpcException rpc ? rpc.Status.Detail : e is OperationCanceledException ? $"no answer within {DialTimeout.TotalSeconds:0} s" : e.Message);
                GatewayLog.HopFailed(logger, route, failure);
                counters.Refused();
                await AnswerAsync(socket, RelayReply.Refusal(e is RpcException { StatusCode: var code } ? code : StatusCode.Unavailable, failure), stopping).ConfigureAwait(false);
                return;
            }
            await using (next.ConfigureAwait(false))
            {
                counters.StreamOpened();
                try
                {
                    await AnswerAsync(socket, RelayReply.Ok.ToArray(), stopping).ConfigureAwait(false);
                    await CopyBothWaysAsync(socket, next, route, hop, stopping).ConfigureAwait(false);
                }
                finally
                {
                    counters.StreamClosed();
                }
            }
        }
        finally
        {
            Interlocked.Decrement(ref _relaying);
        }
    }

    /// <summary>(2) Where a stream goes next, or why it is refused; the same checks whatever hop the gateway is.</summary>
    internal bool TryChooseHop(RelayPreamble preamble, out RelayHop hop, out string route, out (StatusCode Code, string Detail) refusal)
    {
        hop = default;
        route = "";
        var (jobId, source, destination) = (preamble.JobId, preamble.Source, preamble.Destination);
        // An unknown job and a wrong proof are refused alike, so a caller cannot probe which jobs are registered.
        if (!jobs.TryGet(jobId, out var job) || !RouteProof.Matches(job.Token, jobId, source, destination, preamble.Proof))
        {
            refusal = (StatusCode.PermissionDenied, $"job '{LogText.Printable(jobId)}' is not registered here, or the route proof for rank {source} -> rank {destination} does not match its key");
            return false;
        }
        var table = job.Table;
        if (source >= table.Ranks.Count || destination >= table.Ranks.Count || source == destination)
        {
            refusal = (StatusCode.NotFound, $"job {jobId} has no route from rank {source} to rank {destination} ({table.Ranks.Count} ranks)");
            return false;
        }
        var from = table.Ranks[source];
        var to = table.Ranks[destination];
        route = $"job {jobId}: rank {source} ({DomainName(from)}) -> rank {destination} ({DomainName(to)})";
        switch (JobRoutes.HopAt(options.Domain, from.Domain, to.Domain))
        {
            case GatewayHop.Deliver when to.Endpoint.Length == 0:
                refusal = (StatusCode.Unavailable, $"{route}: rank {destination} has not registered its endpoint with this gateway");
                return false;
            case GatewayHop.Deliver:
                hop = new RelayHop($"rank {destination} at", to.Endpoint, Domain: null);
                break;
            case GatewayHop.ToDestinationGateway when to.Gateway.Length == 0:
                refusal = (StatusCode.FailedPrecondition, $"{route}: {DomainName(to)} has no gateway");
                return false;
            case GatewayHop.ToDestinationGateway:
                hop = new RelayHop($"the gateway of {DomainName(to)} at", to.Gateway, to.Domain);
                break;
            default:
                refusal = (StatusCode.FailedPrecondition, $"{route}: neither rank is in domain '{options.Domain}', which this gateway serves");
                return false;
        }
        refusal = default;
        return true;
    }

    internal static string DomainName(RankEntry entry) => entry.Domain.Length == 0 ? "no domain" : $"domain '{entry.Domain}'";

    /// <summary>(3) The next hop's connection, ready to carry the caller's bytes.</summary>
    private async Task<Stream> DialAsync(RelayHop hop, RelayPreamble preamble, CancellationToken stopping)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        deadline.CancelAfter(DialTimeout);
        var address = new Uri(hop.Address);
        Stream stream;
        if (hop.Domain is { } domain && tunnels.Serves(domain))
        {
            // The peer dials out: a connection inside a call it parked here reaches its port over its loopback.
            stream = await tunnels.ConnectAsync(domain, deadline.Token).ConfigureAwait(false);
        }
        else
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(address.IdnHost, address.Port, deadline.Token).ConfigureAwait(false);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
            stream = new NetworkStream(socket, ownsSocket: true);
        }
        if (hop.Domain is null) return stream;
        try
        {
            await stream.WriteAsync(preamble.ToBytes(), deadline.Token).ConfigureAwait(false);
            await stream.FlushAsync(deadline.Token).ConfigureAwait(false);
            var reply = new byte[3 + RelayReply.MaxReasonLength];
            int read = 0, needed = 3;
            StatusCode code;
            string reason;
            while (!RelayReply.TryRead(reply.AsSpan(0, read), out code, out reason, out needed))
            {
                int received = await stream.ReadAsync(reply.AsMemory(read, needed - read), deadline.Token).ConfigureAwait(false);
                if (received == 0) throw new IOException("it closed the connection before it answered the relay preamble");
                read += received;
            }
            if (code != StatusCode.OK) throw new RpcException(new Status(code, $"it refused the stream: {reason}"));
            return stream;
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>
    /// (4) Copies both ways, a pooled buffer each, until both directions ended: an end of one direction is passed on as
    /// a half-close; a failure of either closes both, which the ranks see as a broken connection. So does a stream that
    /// carries no byte either way (the ranks' HTTP/2 pings included) for <see cref="GatewayOptions.StreamIdleTimeout"/>.
    /// </summary>
    private async Task CopyBothWaysAsync(Socket caller, Stream next, string route, RelayHop hop, CancellationToken stopping)
    {
        using var broken = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        var callerStream = new NetworkStream(caller, ownsSocket: false);
        await using (callerStream.ConfigureAwait(false))
        {
            var activity = new Activity();
            var copies = Task.WhenAll(CopyAsync(callerStream, next, activity, broken), CopyAsync(next, callerStream, activity, broken));
            var idle = options.StreamIdleTimeout;
            using (var timer = new PeriodicTimer(TimeSpan.FromTicks(Math.Min(idle.Ticks / 4, TimeSpan.FromMinutes(1).Ticks))))
            {
                while (!copies.IsCompleted && !broken.IsCancellationRequested)
                {
                    var tick = timer.WaitForNextTickAsync(broken.Token).AsTask();
                    if (await Task.WhenAny(copies, tick).ConfigureAwait(false) == copies) break;
                    if (Environment.TickCount64 - Volatile.Read(ref activity.Last) > idle.TotalMilliseconds)
                    {
                        GatewayLog.HopFailed(logger, route, $"gateway of domain '{options.Domain}' ended the relayed stream to {hop.Name} {hop.Address}: no byte either way for {idle} (--stream-idle-timeout)");
                        await broken.CancelAsync().ConfigureAwait(false);
                    }
                }
            }
            var failures = await copies.ConfigureAwait(false);
            if (failures.FirstOrDefault(failure => failure is not null) is { } failure && !stopping.IsCancellationRequested)
                GatewayLog.HopFailed(logger, route, $"gateway of domain '{options.Domain}': the relayed stream to {hop.Name} {hop.Address} broke: {failure}");
        }
    }

    /// <summary>One direction; returns why it failed, or null when its source ended cleanly or the other direction failed.</summary>
    private async Task<string?> CopyAsync(Stream from, Stream to, Activity activity, CancellationTokenSource broken)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        try
        {
            while (true)
            {
                int read = await from.ReadAsync(buffer, broken.Token).ConfigureAwait(false);
                if (read == 0) break;
                Volatile.Write(ref activity.Last, Environment.TickCount64);
                await to.WriteAsync(buffer.AsMemory(0, read), broken.Token).ConfigureAwait(false);
                counters.Relayed(read);
                if (read == buffer.Length && buffer.Length < BulkBufferSize)
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = ArrayPool<byte>.Shared.Rent(BulkBufferSize);
                }
            }
            // The source's end, passed on: the other direction may still carry bytes.
            if (to is NetworkStream { Socket: var socket }) socket.Shutdown(SocketShutdown.Send);
            else await to.DisposeAsync().ConfigureAwait(false);
            return null;
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // Either side broke: the other direction ends too, and both connections close.
            await broken.CancelAsync().ConfigureAwait(false);
            return e is OperationCanceledException ? null : e.Message;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>When a relayed stream last carried a byte (Environment.TickCount64).</summary>
    private sealed class Activity
    {
        public long Last = Environment.TickCount64;
    }

    private async Task RefuseAsync(Socket socket, IPEndPoint remote, StatusCode code, string detail, CancellationToken stopping)
    {
        Refused(remote, $"{detail} ({code})");
        await AnswerAsync(socket, RelayReply.Refusal(code, $"Gateway of domain '{options.Domain}' refused the stream: {detail}."), stopping).ConfigureAwait(false);
    }

    private void Refused(IPEndPoint remote, string reason)
    {
        counters.Refused();
        if (refusals.ShouldLog(remote.Address, "relayed rank streams")) GatewayLog.CallRefused(logger, Method, remote.ToString(), LogText.Printable(reason));
    }

    private static async Task AnswerAsync(Socket socket, byte[] reply, CancellationToken stopping)
    {
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            deadline.CancelAfter(DialTimeout);
            await socket.SendAsync(reply, SocketFlags.None, deadline.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The caller is gone; nothing to tell.
        }
    }
}

/// <summary>Where a relayed stream goes next: a description for errors, the address, and for a peer gateway its domain.</summary>
internal readonly record struct RelayHop(string Name, string Address, string? Domain);
