using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Text;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// This rank's link to a peer on the same node, over the pair's <see cref="PairSegment"/>. A send writes a record
/// (envelope, payload type, length) and the payload into the outgoing ring under the link's lock, so messages keep
/// their order; a large payload streams through the ring while the peer drains it. Whoever polls the link (a thread
/// of the rank waiting in a receive, or the rank's <see cref="SharedMemoryReader"/>) reads the incoming ring: it
/// reassembles each message into a pooled buffer and hands it to the matching engine, and sends an acknowledgement
/// back when a synchronous message is matched. Anything in the incoming ring that is not a valid record aborts the
/// rank with an error naming both ranks, never a read outside the ring.
/// </summary>
internal sealed class SharedMemoryLink : ILink, IDisposable
{
    private const byte DataRecord = 1, AckRecord = 2;
    private const int MaxTypeName = 1024;
    private const int FixedHeader = 1 + 4 + 4 + 4 + 8 + 4 + 1 + 2; // kind, context, source, tag, sync id, type code, array, name length

    private readonly PairSegment _segment;
    private readonly MatchingEngine _engine;
    private readonly int _rank, _peer;
    private readonly Lock _writing = new();
    private readonly Lock _reading = new(); // the incoming ring has one consumer at a time: the rank's reader or a poller
    private readonly ConcurrentDictionary<long, SendOperation> _awaitingAcks = new();
    private long _nextSyncId;
    private volatile bool _closed;

    public SharedMemoryLink(string jobKey, MatchingEngine engine, int rank, int peer)
    {
        _engine = engine;
        _rank = rank;
        _peer = peer;
        // A wait for room or for the rest of a record gives up when the link closes or the rank is aborted (its peer
        // may be gone), and a thread that stops polling to sleep says so, so the rank's reader reads the other links.
        _segment = PairSegment.Open(jobKey, rank, peer, () => _closed || engine.AbortReason is not null, () => engine.Progress?.Sleeping());
    }

    /// <summary>What the peer writes for this rank.</summary>
    public ByteRing Incoming => _segment.Incoming;

    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        var operation = synchronous ? new SendOperation() : SendOperation.Done;
        long syncId = synchronous ? Interlocked.Increment(ref _nextSyncId) : 0;
        if (synchronous) _awaitingAcks[syncId] = operation;
        var name = payload.Type.TypeName is { } typeName ? Encoding.UTF8.GetBytes(typeName) : [];
        if (name.Length > MaxTypeName) throw new MpiException(ErrorClass.InvalidArgument, $"Type name {payload.Type.TypeName} is longer than {MaxTypeName} bytes.");
        Span<byte> header = stackalloc byte[FixedHeader + MaxTypeName + 8];
        header[0] = DataRecord;
        BinaryPrimitives.WriteInt32LittleEndian(header[1..], envelope.Context);
        BinaryPrimitives.WriteInt32LittleEndian(header[5..], envelope.Source);
        BinaryPrimitives.WriteInt32LittleEndian(header[9..], envelope.Tag);
        BinaryPrimitives.WriteInt64LittleEndian(header[13..], syncId);
        BinaryPrimitives.WriteInt32LittleEndian(header[21..], (int)payload.Type.Code);
        header[25] = payload.Type.IsArray ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(header[26..], payload.Type.TypeName is null ? ushort.MaxValue : (ushort)name.Length);
        name.CopyTo(header[FixedHeader..]);
        BinaryPrimitives.WriteInt64LittleEndian(header[(FixedHeader + name.Length)..], payload.Bytes.Length);
        try
        {
            lock (_writing)
            {
                _segment.Outgoing.Write(header[..(FixedHeader + name.Length + 8)]);
                _segment.Outgoing.Write(payload.Bytes.Span);
            }
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidDataException)
        {
            _awaitingAcks.TryRemove(syncId, out _);
            throw _engine.AbortReason ?? new MpiException(ErrorClass.Transport, $"Rank {_rank} cannot send to rank {_peer} through shared memory: {e.Message}", e);
        }
        finally
        {
            if (payload.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
        }
        return operation;
    }

    /// <summary>Ends every wait on the link's rings, within a sleep slice: each gives up.</summary>
    public void Close()
    {
        _closed = true;
        _segment.Incoming.WakeSleepers();
        _segment.Outgoing.WakeSleepers();
    }

    /// <summary>Unmaps the pair's memory: only once no thread reads or writes the link (<see cref="Close"/> first).</summary>
    public void Dispose() => _segment.Dispose();

    private void SendAck(long syncId)
    {
        Span<byte> record = stackalloc byte[9];
        record[0] = AckRecord;
        BinaryPrimitives.WriteInt64LittleEndian(record[1..], syncId);
        try
        {
            lock (_writing) _segment.Outgoing.Write(record);
        }
        catch (ObjectDisposedException)
        {
            // Closing: the peer is finishing too.
        }
    }

    /// <summary>
    /// Reads what the peer has written so far, on the calling thread, unless another thread is reading it; whether
    /// it read anything.
    /// </summary>
    public bool Poll()
    {
        if (_closed || !_segment.Incoming.HasData || !_reading.TryEnter()) return false;
        try
        {
            ReadAvailable();
            return true;
        }
        catch (ObjectDisposedException)
        {
            // Closing or aborted: the wait that polled ends with the abort, not with this.
            return false;
        }
        finally
        {
            _reading.Exit();
        }
    }

    /// <summary>Reads whole records while the ring holds the start of one (under <see cref="_reading"/>).</summary>
    private void ReadAvailable()
    {
        try
        {
            while (_segment.Incoming.HasData) ReadRecord();
        }
        catch (InvalidDataException e)
        {
            // The abort also ends every later wait on the ring, the reader's included.
            _engine.Abort(new MpiException(ErrorClass.Transport, $"Shared memory from rank {_peer} to rank {_rank} is corrupt: {e.Message}."));
        }
    }

    /// <summary>Reads one record, waiting for the rest of it as the peer writes it, and acts on it.</summary>
    private void ReadRecord()
    {
        var ring = _segment.Incoming;
        Span<byte> header = stackalloc byte[FixedHeader + MaxTypeName + 8];
        ring.ReadExactly(header[..1]);
        if (header[0] == AckRecord)
        {
            ring.ReadExactly(header[..8]);
            long id = BinaryPrimitives.ReadInt64LittleEndian(header);
            if (!_awaitingAcks.TryRemove(id, out var operation)) throw new InvalidDataException($"an acknowledgement of synchronous send {id}, which is not awaited");
            operation.Delivered();
            return;
        }
        if (header[0] != DataRecord) throw new InvalidDataException($"a record of kind {header[0]}");
        ring.ReadExactly(header[1..FixedHeader]);
        var envelope = new Envelope(BinaryPrimitives.ReadInt32LittleEndian(header[1..]), BinaryPrimitives.ReadInt32LittleEndian(header[5..]), BinaryPrimitives.ReadInt32LittleEndian(header[9..]));
        long syncId = BinaryPrimitives.ReadInt64LittleEndian(header[13..]);
        var code = (PayloadCode)BinaryPrimitives.ReadInt32LittleEndian(header[21..]);
        if (!Enum.IsDefined(code) || header[25] > 1) throw new InvalidDataException($"a payload type {(int)code}/{header[25]}");
        int nameLength = BinaryPrimitives.ReadUInt16LittleEndian(header[26..]);
        string? typeName = null;
        if (nameLength != ushort.MaxValue)
        {
            if (nameLength > MaxTypeName) throw new InvalidDataException($"a type name of {nameLength} bytes");
            ring.ReadExactly(header[FixedHeader..(FixedHeader + nameLength)]);
            typeName = Encoding.UTF8.GetString(header[FixedHeader..(FixedHeader + nameLength)]);
        }
        ring.ReadExactly(header[..8]);
        long length = BinaryPrimitives.ReadInt64LittleEndian(header);
        if (length < 0 || length > Array.MaxLength) throw new InvalidDataException($"a payload of {length} bytes");
        var type = new PayloadType(code, header[25] == 1, typeName);
        var buffer = IncomingBuffer.For(type, (int)length, _engine, envelope);
        try
        {
            ring.ReadExactly(buffer.Bytes.Span);
        }
        catch
        {
            buffer.Return();
            throw;
        }
        _engine.Deliver(buffer.ToMessage(envelope, type, syncId == 0 ? null : new Acknowledgement(this, syncId)));
    }

    /// <summary>
    /// Tells the sender of a synchronous message that it was matched. Written from the thread pool: the match may
    /// happen while this link is read, and a reader must never wait for room in the outgoing ring (the peer's reader
    /// may be waiting for room in this one).
    /// </summary>
    private sealed class Acknowledgement(SharedMemoryLink link, long syncId) : IDeliveryReceipt
    {
        public void Delivered() => ThreadPool.UnsafeQueueUserWorkItem(static state => state.link.SendAck(state.syncId), (link, syncId), preferLocal: false);

        public void Failed(MpiException error)
        {
            // The job is aborting; the sender learns it from the abort.
        }
    }
}
