using System.Buffers;
using System.Collections.Concurrent;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// Writes this rank's frames on one <see cref="PairStream"/>, one message at a time and in order: its messages to
/// the peer (once it chose the stream for them) and its acknowledgements of the peer's synchronous sends. It also
/// holds this rank's synchronous sends awaiting the peer's acknowledgement, which arrive on the same stream the other
/// way. Messages above <see cref="ChunkSize"/> are split into chunks.
/// </summary>
/// <remarks>
/// A send writes on the sending thread, straight to the socket, and is complete when it returns: no queue, no
/// thread between the caller and the kernel. Only when another thread is writing on the stream at that moment is
/// the message queued (its payload copied up to <see cref="EagerLimit"/>, else referenced and its send completed once
/// written), and that thread writes it before it leaves. Blocking writes cannot deadlock two ranks: each
/// connection's reader always drains what arrives into the matching engine.
/// </remarks>
internal sealed class StreamSender
{
    /// <summary>
    /// Payload bytes per frame. The receiver copies a frame out only once all of it has arrived, so smaller chunks
    /// let that copy overlap the next chunk's transfer.
    /// </summary>
    public const int ChunkSize = 1024 * 1024;

    /// <summary>Queued messages up to this size are copied, and their sends complete at once (the in-process device's limit too).</summary>
    public const int EagerLimit = 64 * 1024;

    private static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(5);

    private readonly PairStream _pair;
    private readonly ConcurrentDictionary<ulong, SendOperation> _awaitingAck = new();
    private readonly Queue<Pending> _outbox = new(); // also the lock over the fields below
    private ulong _sequence;
    private bool _writing; // a thread is writing on the stream and will write what is queued before it stops
    private MpiException? _failure;

    public StreamSender(PairStream pair) => _pair = pair;

    /// <summary>
    /// Sends one message; the operation completes when the caller's buffer may be reused (at once, unless a large
    /// message had to queue), or for a synchronous send when the peer acknowledges the match.
    /// </summary>
    /// <exception cref="MpiException">Transport: this write, or an earlier one to this peer, failed.</exception>
    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        var operation = synchronous ? new SendOperation() : SendOperation.Done;
        Pending message;
        lock (_outbox)
        {
            if (_failure is { } failure) throw new MpiException(ErrorClass.Transport, failure.Message, failure);
            // The sequence is taken in write order: the peer acknowledges by it.
            ulong sequence = ++_sequence;
            if (synchronous) _awaitingAck[sequence] = operation;
            message = new Pending(envelope, payload.Type, sequence, synchronous, payload.Bytes, payload.Rented, null);
            if (_writing)
            {
                _outbox.Enqueue(Queued(message, ref operation));
                return operation;
            }
            _writing = true;
        }
        try
        {
            Write(message);
        }
        catch (RpcException e)
        {
            throw Fail(e);
        }
        finally
        {
            if (payload.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
        }
        Drain();
        return operation;

        Pending Queued(Pending message, ref SendOperation operation)
        {
            var bytes = message.Payload;
            if (bytes.Length <= EagerLimit)
            {
                // Copied now: the caller's buffer is free when Send returns.
                var copy = ArrayPool<byte>.Shared.Rent(bytes.Length);
                bytes.Span.CopyTo(copy);
                if (message.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
                return message with { Payload = copy.AsMemory(0, bytes.Length), Rented = copy };
            }
            if (!synchronous) operation = new SendOperation();
            return message with { Written = synchronous ? null : operation };
        }
    }

    /// <summary>
    /// Acknowledges the peer's synchronous send numbered <paramref name="sequence"/>. Called on the connection's
    /// reader thread, which must not block: the acknowledgement is written now only if that cannot block, and is
    /// otherwise left to the stream's current writer or to the thread pool.
    /// </summary>
    public void PostAck(ulong sequence)
    {
        var ack = new Pending(default, default, sequence, false, default, null, null, IsAck: true);
        lock (_outbox)
        {
            if (_failure is not null) return; // the peer learns of the break from its own side
            if (_writing)
            {
                _outbox.Enqueue(ack);
                return;
            }
            _writing = true;
        }
        bool written;
        try
        {
            written = _pair.Stream.TryWriteNow(AckFrame(sequence));
        }
        catch (RpcException e)
        {
            Fail(e);
            return;
        }
        lock (_outbox)
        {
            if (!written) _outbox.Enqueue(ack);
            if (_outbox.Count == 0)
            {
                _writing = false;
                return;
            }
        }
        ThreadPool.UnsafeQueueUserWorkItem(static sender => sender.Drain(), this, preferLocal: false);
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

    /// <summary>Lets queued messages be written (waiting briefly), then ends this rank's use of the stream.</summary>
    public async ValueTask DisposeAsync()
    {
        var deadline = DateTime.UtcNow + CloseWait;
        while (DateTime.UtcNow < deadline)
        {
            lock (_outbox)
                if (!_writing) break;
            await Task.Delay(1).ConfigureAwait(false);
        }
        await _pair.CloseAsync().ConfigureAwait(false);
    }

    /// <summary>Writes what other threads queued meanwhile, until the queue is empty.</summary>
    private void Drain()
    {
        while (true)
        {
            Pending message;
            lock (_outbox)
            {
                if (!_outbox.TryDequeue(out message!))
                {
                    _writing = false;
                    return;
                }
            }
            try
            {
                Write(message);
            }
            catch (RpcException e)
            {
                Fail(e, message);
                return;
            }
            if (message.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
            message.Written?.Delivered();
        }
    }

    private void Write(Pending message)
    {
        var stream = _pair.Stream;
        if (message.IsAck)
        {
            stream.Write(AckFrame(message.Sequence), []);
            return;
        }
        var bytes = message.Payload.Span;
        int firstPart = Math.Min(bytes.Length, ChunkSize);
        int maxHead = FrameCodec.MaxDataHeadSize(message.Type);
        byte[]? rentedHead = maxHead > 256 ? ArrayPool<byte>.Shared.Rent(maxHead) : null;
        Span<byte> head = rentedHead ?? stackalloc byte[256];
        try
        {
            int headLength = FrameCodec.WriteDataHead(head, message.Envelope, message.Type, message.Sequence, message.Synchronous, bytes.Length, firstPart);
            stream.Write(head[..headLength], bytes[..firstPart]);
            for (int offset = firstPart; offset < bytes.Length; offset += ChunkSize)
            {
                var part = bytes.Slice(offset, Math.Min(ChunkSize, bytes.Length - offset));
                headLength = FrameCodec.WriteChunkHead(head, part.Length);
                stream.Write(head[..headLength], part);
            }
        }
        finally
        {
            if (rentedHead is not null) ArrayPool<byte>.Shared.Return(rentedHead);
        }
    }

    private static byte[] AckFrame(ulong sequence) => new Frame { Ack = new Ack { Sequence = sequence } }.ToByteArray();

    /// <summary>
    /// The stream is broken: <paramref name="failed"/> and every queued message fail, and so does every later send
    /// (sends that already completed learn nothing more; the peer sees its stream end and aborts its side of the job).
    /// </summary>
    private MpiException Fail(RpcException cause, Pending? failed = null)
    {
        var error = new MpiException(ErrorClass.Transport, $"Sending to rank {_pair.Peer} ({_pair.Way}) failed: {StatusText.Of(cause)}", cause);
        List<Pending> dropped = failed is { } message ? [message] : [];
        lock (_outbox)
        {
            _failure = error;
            _writing = false;
            while (_outbox.TryDequeue(out var queued)) dropped.Add(queued);
        }
        foreach (var each in dropped)
        {
            if (each.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
            each.Written?.Failed(error);
        }
        FailAwaitingAcks(error);
        return error;
    }

    /// <summary>
    /// A message waiting for the stream: its payload either a copy in <see cref="Rented"/> or the sender's memory
    /// (<see cref="Written"/> completes once it is written); or an acknowledgement.
    /// </summary>
    private readonly record struct Pending(Envelope Envelope, PayloadType Type, ulong Sequence, bool Synchronous, ReadOnlyMemory<byte> Payload, byte[]? Rented, SendOperation? Written, bool IsAck = false);
}
