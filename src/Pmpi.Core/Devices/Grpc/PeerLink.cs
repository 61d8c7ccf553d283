using System.Buffers;
using System.Collections.Concurrent;
using Google.Protobuf;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The sending half of the gRPC device towards one peer: one long-lived RankTransport.Connect call whose request
/// stream carries this rank's messages to the peer in order, and whose response stream brings back the
/// acknowledgements of synchronous sends. Messages above <see cref="ChunkSize"/> are split into chunks.
/// </summary>
internal sealed class PeerLink : IAsyncDisposable
{
    /// <summary>Payload bytes per frame: large enough to amortise framing, well under the 16 MB message limit.</summary>
    public const int ChunkSize = 4 * 1024 * 1024;

    private readonly DuplexCall<Frame, Frame> _call;
    private readonly ConcurrentDictionary<ulong, SendOperation> _awaitingAck = new();
    private readonly SemaphoreSlim _order = new(1, 1);
    private readonly Task _ackReader;
    private readonly int _peer;
    private ulong _sequence;

    private PeerLink(DuplexCall<Frame, Frame> call, int peer)
    {
        _call = call;
        _peer = peer;
        _ackReader = Task.Run(ReadAcksAsync);
    }

    public static async Task<PeerLink> OpenAsync(RpcChannel channel, RankIdentity identity, int peer, CancellationToken cancellationToken)
    {
        var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, cancellationToken: cancellationToken).ConfigureAwait(false);
        await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = identity.JobId, JobToken = identity.JobToken, SourceWorldRank = identity.Rank } },
            cancellationToken).ConfigureAwait(false);
        return new PeerLink(call, peer);
    }

    /// <summary>Writes one message (all its chunks, uninterrupted); completes when written, or for a synchronous send when acknowledged.</summary>
    public async Task<SendOperation> SendAsync(Envelope envelope, OutgoingPayload payload, bool synchronous, CancellationToken cancellationToken)
    {
        var operation = synchronous ? new SendOperation() : SendOperation.Done;
        await _order.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            ulong sequence = ++_sequence;
            if (synchronous) _awaitingAck[sequence] = operation;
            var bytes = payload.Bytes;
            var first = bytes[..Math.Min(bytes.Length, ChunkSize)];
            var data = new Data
            {
                Context = envelope.Context,
                Source = envelope.Source,
                Tag = envelope.Tag,
                Sequence = sequence,
                Synchronous = synchronous,
                TypeCode = (int)payload.Type.Code,
                IsArray = payload.Type.IsArray,
                TypeName = payload.Type.TypeName ?? "",
                TotalLength = bytes.Length,
                Payload = UnsafeByteOperations.UnsafeWrap(first),
            };
            await _call.Requests.WriteAsync(new Frame { Data = data }, cancellationToken).ConfigureAwait(false);
            for (int offset = first.Length; offset < bytes.Length; offset += ChunkSize)
            {
                var part = bytes.Slice(offset, Math.Min(ChunkSize, bytes.Length - offset));
                await _call.Requests.WriteAsync(new Frame { Chunk = new Chunk { Payload = UnsafeByteOperations.UnsafeWrap(part) } }, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is RpcException or IOException or HttpRequestException)
        {
            throw new MpiException(ErrorClass.Transport, $"Sending to rank {_peer} failed: {e.Message}", e);
        }
        finally
        {
            _order.Release();
            // Written means copied into the connection: the sender's buffer is free again.
            if (payload.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
        }
        return operation;
    }

    private async Task ReadAcksAsync()
    {
        try
        {
            while (await _call.Responses.ReadAsync(_call.CancellationToken).ConfigureAwait(false) is { } frame)
            {
                if (frame.BodyCase == Frame.BodyOneofCase.Ack && _awaitingAck.TryRemove(frame.Ack.Sequence, out var operation)) operation.Delivered();
            }
        }
        catch (Exception e) when (e is RpcException or IOException or OperationCanceledException or HttpRequestException)
        {
            var error = new MpiException(ErrorClass.Transport, $"The stream to rank {_peer} failed: {e.Message}", e);
            foreach (var operation in _awaitingAck.Values) operation.Failed(error);
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _call.CompleteRequestsAsync().ConfigureAwait(false);
            await _ackReader.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or IOException or RpcException or OperationCanceledException)
        {
            // Closing at the end of the job; the peer may be gone already.
        }
        await _call.DisposeAsync().ConfigureAwait(false);
    }
}
