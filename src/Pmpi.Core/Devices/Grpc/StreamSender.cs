using System.Buffers;
using System.Collections.Concurrent;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// What sends this rank's messages to one peer over gRPC, in order, on the one
/// <see cref="PairStream"/> chosen for them (a dialed call's requests or a served call's responses), and the
/// synchronous sends awaiting the peer's acknowledgement, which arrive on the same stream the other way. Messages
/// above <see cref="ChunkSize"/> are split into chunks.
/// </summary>
/// <remarks>
/// A send never waits for the network: it queues the message and returns, and a pump writes the queue to the
/// stream in order. The pump starts on the sending thread and runs there until its first write has to wait, so a
/// message reaches the HTTP/2 connection without a thread-pool hop. Up to <see cref="EagerLimit"/> bytes the payload
/// is copied and the send is complete at once (eager); above it the payload is written from the caller's memory and
/// the send completes once the last chunk has been written.
/// </remarks>
internal sealed class StreamSender : IAsyncDisposable
{
    /// <summary>
    /// Payload bytes per frame. The receiver copies a frame out only once all of it has arrived, so smaller chunks
    /// let that copy overlap the next chunk's transfer; each chunk costs a frame head and a flush.
    /// </summary>
    public const int ChunkSize = 1024 * 1024;

    /// <summary>Messages up to this size are copied and their sends complete when queued (the in-process device's limit too).</summary>
    public const int EagerLimit = 64 * 1024;

    private readonly PairStream _stream;
    private readonly ConcurrentDictionary<ulong, SendOperation> _awaitingAck = new();
    private readonly Queue<OutgoingMessage> _outbox = new(); // also the lock over the fields below
    private readonly byte[] _chunkHead = new byte[FrameCodec.MaxChunkHeadSize]; // the pump's alone
    private ulong _sequence;
    private Task _pump = Task.CompletedTask;
    private bool _pumping;
    private MpiException? _failure;

    /// <summary>A sender on <paramref name="stream"/>, which it becomes the <see cref="PairStream.Sender"/> of.</summary>
    public StreamSender(PairStream stream)
    {
        _stream = stream;
        stream.Sender = this;
    }

    /// <summary>
    /// Queues one message; the operation completes when the caller's buffer may be reused (at once up to
    /// <see cref="EagerLimit"/>, else once written), or for a synchronous send when the peer acknowledges the match.
    /// </summary>
    /// <exception cref="MpiException">Transport: an earlier write to this peer failed.</exception>
    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        var bytes = payload.Bytes;
        bool eager = bytes.Length <= EagerLimit;
        var operation = synchronous || !eager ? new SendOperation() : SendOperation.Done;
        int firstPart = Math.Min(bytes.Length, ChunkSize);
        int maxHead = FrameCodec.MaxDataHeadSize(payload.Type);
        var buffer = ArrayPool<byte>.Shared.Rent(maxHead + (eager ? bytes.Length : 0));
        bool startPump;
        lock (_outbox)
        {
            if (_failure is { } failure)
            {
                ArrayPool<byte>.Shared.Return(buffer);
                throw new MpiException(ErrorClass.Transport, failure.Message, failure);
            }
            // The sequence is taken in queue order: the peer acknowledges by it.
            ulong sequence = ++_sequence;
            if (synchronous) _awaitingAck[sequence] = operation;
            int head = FrameCodec.WriteDataHead(buffer, envelope, payload.Type, sequence, synchronous, bytes.Length, firstPart);
            OutgoingMessage message;
            if (eager)
            {
                bytes.Span.CopyTo(buffer.AsSpan(head));
                message = new OutgoingMessage(buffer, head, buffer.AsMemory(head, bytes.Length), null, null);
            }
            else message = new OutgoingMessage(buffer, head, bytes, payload.Rented, synchronous ? null : operation);
            _outbox.Enqueue(message);
            startPump = !_pumping;
            _pumping = true;
        }
        if (eager && payload.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
        if (startPump)
        {
            // Runs on this thread up to its first write that has to wait.
            var pump = PumpAsync();
            lock (_outbox) if (!pump.IsCompleted) _pump = pump;
        }
        return operation;
    }

    /// <summary>Writes the queued messages in order until the queue is empty.</summary>
    private async Task PumpAsync()
    {
        while (true)
        {
            OutgoingMessage message;
            lock (_outbox)
            {
                if (!_outbox.TryDequeue(out message))
                {
                    _pumping = false;
                    return;
                }
            }
            try
            {
                await WriteAsync(message).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                // Whatever broke the write, the queue must not stall with _pumping set: fail it as a whole.
                Fail(message, new MpiException(ErrorClass.Transport, $"Sending to rank {_stream.Peer} ({_stream.Way}) failed: {e.Message}", e));
                return;
            }
            message.Release();
            message.Written?.Delivered();
        }
    }

    private async ValueTask WriteAsync(OutgoingMessage message)
    {
        var bytes = message.Payload;
        var part = bytes[..Math.Min(bytes.Length, ChunkSize)];
        await _stream.Outgoing.WriteAsync(message.Buffer.AsMemory(0, message.HeadLength), part, _stream.CancellationToken).ConfigureAwait(false);
        for (int offset = part.Length; offset < bytes.Length; offset += part.Length)
        {
            part = bytes.Slice(offset, Math.Min(ChunkSize, bytes.Length - offset));
            int head = FrameCodec.WriteChunkHead(_chunkHead, part.Length);
            await _stream.Outgoing.WriteAsync(_chunkHead.AsMemory(0, head), part, _stream.CancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The stream is broken: this message and every queued one fail, and so does every later send (eager sends that
    /// already completed learn nothing more; the peer sees its stream end and aborts its side of the job).
    /// </summary>
    private void Fail(OutgoingMessage failed, MpiException error)
    {
        List<OutgoingMessage> dropped = [failed];
        lock (_outbox)
        {
            _failure = error;
            _pumping = false;
            while (_outbox.TryDequeue(out var message)) dropped.Add(message);
        }
        foreach (var message in dropped)
        {
            message.Release();
            message.Written?.Failed(error);
        }
        foreach (var operation in _awaitingAck.Values) operation.Failed(error);
    }

    /// <summary>The peer matched the synchronous send numbered <paramref name="sequence"/>.</summary>
    public void Acknowledge(ulong sequence)
    {
        if (_awaitingAck.TryRemove(sequence, out var operation)) operation.Delivered();
    }

    /// <summary>The stream broke: no acknowledgement will come for the synchronous sends still waiting for one.</summary>
    public void FailAwaitingAcks(MpiException error)
    {
        foreach (var operation in _awaitingAck.Values) operation.Failed(error);
    }

    /// <summary>Writes what is queued (waiting briefly), then ends this rank's use of the stream.</summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            Task pump;
            lock (_outbox) pump = _pump;
            await pump.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or IOException or RpcException or OperationCanceledException)
        {
            // Closing at the end of the job; the peer may be gone already.
        }
        await _stream.CloseAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// A queued message: <see cref="Buffer"/> (pooled) starts with its Data frame's head; the payload is either a
    /// copy further on in the same buffer (eager) or the sender's memory, with <see cref="Rented"/> to return and
    /// <see cref="Written"/> to complete once it is written.
    /// </summary>
    private readonly record struct OutgoingMessage(byte[] Buffer, int HeadLength, ReadOnlyMemory<byte> Payload, byte[]? Rented, SendOperation? Written)
    {
        public void Release()
        {
            ArrayPool<byte>.Shared.Return(Buffer);
            if (Rented is not null) ArrayPool<byte>.Shared.Return(Rented);
        }
    }
}
