using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Text;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// This rank's link to a peer on the same node, over the pair's <see cref="PairSegment"/>. A send writes a record
/// (envelope, payload type, length) and the payload into the outgoing ring under the link's lock, so messages keep
/// their order; a large payload streams through the ring while the peer drains it, or, from
/// <see cref="LendMinimum"/> bytes and once the peer has shown it can (<see cref="PairSegment.CheckPeerReadable"/>),
/// stays where it is: the record gives its address, the peer copies it straight out of this process
/// (<see cref="PeerMemory"/>) and acknowledges, and only then may the sender reuse it. Whoever polls the link (a
/// thread of the rank waiting in a receive, or the rank's <see cref="SharedMemoryReader"/>) reads the incoming ring:
/// it reassembles each message into a buffer (or the array its receive returns) and hands it to the matching
/// engine, and sends an acknowledgement back when a synchronous message is matched. Anything in the incoming ring
/// that is not a valid record aborts the rank with an error naming both ranks, never a read outside the ring.
/// </summary>
internal sealed class SharedMemoryLink : ILink, IDisposable
{
    // A data record carries its payload; a lent one its payload's address in the sender, acknowledged once copied
    // (or, synchronous, once matched); an acknowledgement the id of the send it completes; a rewind, one byte, says
    // that the next record is at the ring's start (ByteRing.TryRewind).
    private const byte DataRecord = 1, AckRecord = 2, LentRecord = 3, SynchronousLentRecord = 4, RewindRecord = 5;
    private const int MaxTypeName = 1024;
    private const int FixedHeader = 1 + 4 + 4 + 4 + 8 + 4 + 1 + 2 + 8; // kind, context, source, tag, ack id, type code, array, name length, payload length
    private const int MaxHeader = FixedHeader + MaxTypeName + 8; // ... type name, lent address
    private const int AckLength = 1 + 8; // kind, ack id

    /// <summary>
    /// From this many bytes a payload is lent rather than written through the ring: a quarter of the ring, from where
    /// a message takes enough of it that its sender may wait for the peer to drain it; lent, it goes by one copy out
    /// of the sender's memory instead of two through the ring. Measured in docs/bench-log/2026-11-25-lent-payloads.md
    /// (Lent payloads).
    /// </summary>
    internal const int LendMinimum = PairSegment.RingCapacity / 4;

    private readonly PairSegment _segment;
    private readonly MatchingEngine _engine;
    private readonly int _rank, _peer;
    private readonly Lock _writing = new();
    private readonly Lock _reading = new(); // the incoming ring has one consumer at a time: the rank's reader or a poller
    // Made at the link's first synchronous or lent send, which many links never make: a ReadyToRun rank compiles the
    // dictionary's code over AwaitedAck at run time.
    private ConcurrentDictionary<long, AwaitedAck>? _awaitingAcks;
    private long _nextAckId;
    private bool _peerChecked; // whether this side has tried to read the peer's memory (under _reading)
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

    public LinkKind Kind => LinkKind.SharedMemory;

    [SkipLocalsInit] // the header's kilobyte is written before it is read: not zeroed for every message
    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        bool lend = payload.Bytes.Length >= LendMinimum && _segment.PeerReadsThisRank;
        var operation = synchronous || lend ? new SendOperation() : SendOperation.Done;
        long ackId = synchronous || lend ? Interlocked.Increment(ref _nextAckId) : 0;
        var name = payload.Type.TypeName is { } typeName ? Encoding.UTF8.GetBytes(typeName) : [];
        if (name.Length > MaxTypeName) throw new MpiException(ErrorClass.InvalidArgument, $"Type name {payload.Type.TypeName} is longer than {MaxTypeName} bytes.");
        Span<byte> header = stackalloc byte[MaxHeader];
        header[0] = !lend ? DataRecord : synchronous ? SynchronousLentRecord : LentRecord;
        BinaryPrimitives.WriteInt32LittleEndian(header[1..], envelope.Context);
        BinaryPrimitives.WriteInt32LittleEndian(header[5..], envelope.Source);
        BinaryPrimitives.WriteInt32LittleEndian(header[9..], envelope.Tag);
        BinaryPrimitives.WriteInt64LittleEndian(header[13..], ackId);
        BinaryPrimitives.WriteInt32LittleEndian(header[21..], (int)payload.Type.Code);
        header[25] = payload.Type.IsArray ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16LittleEndian(header[26..], payload.Type.TypeName is null ? ushort.MaxValue : (ushort)name.Length);
        BinaryPrimitives.WriteInt64LittleEndian(header[28..], payload.Bytes.Length);
        name.CopyTo(header[FixedHeader..]);
        int length = FixedHeader + name.Length;
        // A lent payload stays pinned, and a rented one the link's, until the peer acknowledges its copy.
        var awaited = new AwaitedAck(operation, lend ? payload.Bytes.Pin() : default, lend ? payload.Rented : null);
        if (lend)
        {
            unsafe { BinaryPrimitives.WriteInt64LittleEndian(header[length..], (long)awaited.Pin.Pointer); }
            length += 8;
        }
        if (ackId != 0) LazyInitializer.EnsureInitialized(ref _awaitingAcks)[ackId] = awaited;
        try
        {
            lock (_writing)
            {
                _segment.Outgoing.TryRewind(RewindRecord, length + (lend ? 0 : payload.Bytes.Length));
                _segment.Outgoing.Write(header[..length], lend ? default : payload.Bytes.Span);
            }
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidDataException)
        {
            if (ackId != 0 && _awaitingAcks!.TryRemove(ackId, out _)) awaited.Release();
            throw _engine.AbortReason ?? new MpiException(ErrorClass.Transport, $"Rank {_rank} cannot send to rank {_peer} through shared memory: {e.Message}", e);
        }
        finally
        {
            if (!lend && payload.Rented is { } rented) ArrayPool<byte>.Shared.Return(rented);
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

    /// <summary>Leaves the pair's memory mapped, for threads that may still touch it, and removes only its name.</summary>
    public void Abandon() => _segment.RemoveName();

    /// <summary>
    /// Tells the peer that send <paramref name="ackId"/> is done with: inline when the outgoing ring is free and has
    /// room, else from the thread pool, since the caller may be reading this link or matching, and a reader must never
    /// wait for room in the outgoing ring (the peer's reader may be waiting for room in this one).
    /// </summary>
    private void Acknowledge(long ackId)
    {
        Span<byte> record = stackalloc byte[AckLength];
        WriteAckRecord(record, ackId);
        if (_writing.TryEnter())
        {
            try
            {
                if (_segment.Outgoing.TryWrite(record)) return;
            }
            catch (Exception e) when (e is ObjectDisposedException or InvalidDataException)
            {
                return; // closing, or the peer's index is corrupt, which its reader reports
            }
            finally
            {
                _writing.Exit();
            }
        }
        ThreadPool.UnsafeQueueUserWorkItem(static state => state.link.WriteAck(state.ackId), (link: this, ackId), preferLocal: false);
    }

    private void WriteAck(long ackId)
    {
        Span<byte> record = stackalloc byte[AckLength];
        WriteAckRecord(record, ackId);
        try
        {
            lock (_writing) _segment.Outgoing.Write(record);
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidDataException)
        {
            // Closing: the peer is finishing too; or its index is corrupt, which its reader reports.
        }
    }

    private static void WriteAckRecord(Span<byte> record, long ackId)
    {
        record[0] = AckRecord;
        BinaryPrimitives.WriteInt64LittleEndian(record[1..], ackId);
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

    /// <summary>Reads whole records while the ring holds the start of one, then gives their bytes back (under <see cref="_reading"/>).</summary>
    private void ReadAvailable()
    {
        try
        {
            while (_segment.Incoming.HasData) ReadRecord();
            _segment.Incoming.Release();
        }
        catch (InvalidDataException e)
        {
            // The abort also ends every later wait on the ring, the reader's included.
            _engine.Abort(new MpiException(ErrorClass.Transport, $"Shared memory from rank {_peer} to rank {_rank} is corrupt: {e.Message}."));
        }
        catch (IOException e)
        {
            _engine.Abort(new MpiException(ErrorClass.Transport, $"Rank {_rank} cannot copy a message out of rank {_peer}'s memory: {e.Message}."));
        }
    }

    /// <summary>Reads one record, waiting for the rest of it as the peer writes it, and acts on it.</summary>
    [SkipLocalsInit] // as in Send: the header is read into before it is looked at
    private void ReadRecord()
    {
        if (!_peerChecked)
        {
            // Once, before the peer lends anything: it lends only after this.
            _peerChecked = true;
            _segment.CheckPeerReadable();
        }
        var ring = _segment.Incoming;
        Span<byte> header = stackalloc byte[MaxHeader];
        ring.ReadExactly(header[..1]);
        byte kind = header[0];
        if (kind == RewindRecord)
        {
            ring.SkipToLapEnd();
            return;
        }
        if (kind == AckRecord)
        {
            ring.ReadExactly(header[..8]);
            long id = BinaryPrimitives.ReadInt64LittleEndian(header);
            if (Volatile.Read(ref _awaitingAcks) is not { } awaiting || !awaiting.TryRemove(id, out var awaited))
                throw new InvalidDataException($"an acknowledgement of send {id}, which is not awaited");
            awaited.Release();
            awaited.Operation.Delivered();
            return;
        }
        if (kind is not (DataRecord or LentRecord or SynchronousLentRecord)) throw new InvalidDataException($"a record of kind {kind}");
        ring.ReadExactly(header[1..FixedHeader]);
        var envelope = new Envelope(BinaryPrimitives.ReadInt32LittleEndian(header[1..]), BinaryPrimitives.ReadInt32LittleEndian(header[5..]), BinaryPrimitives.ReadInt32LittleEndian(header[9..]));
        long ackId = BinaryPrimitives.ReadInt64LittleEndian(header[13..]);
        var code = (PayloadCode)BinaryPrimitives.ReadInt32LittleEndian(header[21..]);
        if (code is < PayloadCode.Byte or > PayloadCode.Fields || header[25] > 1) throw new InvalidDataException($"a payload type {(int)code}/{header[25]}");
        int nameLength = BinaryPrimitives.ReadUInt16LittleEndian(header[26..]);
        long length = BinaryPrimitives.ReadInt64LittleEndian(header[28..]);
        if (length < 0 || length > Array.MaxLength) throw new InvalidDataException($"a payload of {length} bytes");
        string? typeName = null;
        if (nameLength != ushort.MaxValue)
        {
            if (nameLength > MaxTypeName) throw new InvalidDataException($"a type name of {nameLength} bytes");
            ring.ReadExactly(header[FixedHeader..(FixedHeader + nameLength)]);
            typeName = Encoding.UTF8.GetString(header[FixedHeader..(FixedHeader + nameLength)]);
        }
        long address = 0;
        if (kind != DataRecord)
        {
            ring.ReadExactly(header[..8]);
            address = BinaryPrimitives.ReadInt64LittleEndian(header);
        }
        var type = new PayloadType(code, header[25] == 1, typeName);
        var buffer = IncomingBuffer.For(type, (int)length, _engine, envelope);
        try
        {
            if (kind == DataRecord) ring.ReadExactly(buffer.Bytes.Span);
            else PeerMemory.Read(_segment.PeerProcessId, address, buffer.Bytes.Span);
        }
        catch
        {
            buffer.Return();
            throw;
        }
        if (kind == LentRecord) Acknowledge(ackId);
        var receipt = kind == LentRecord || ackId == 0 ? null : new Acknowledgement(this, ackId);
        _engine.Deliver(buffer.ToMessage(envelope, type, receipt));
    }

    /// <summary>A send that waits for the peer's acknowledgement, and what it holds until then.</summary>
    private readonly record struct AwaitedAck(SendOperation Operation, MemoryHandle Pin, byte[]? Rented)
    {
        /// <summary>Unpins a lent payload and gives back its rented buffer.</summary>
        public void Release()
        {
            Pin.Dispose();
            if (Rented is not null) ArrayPool<byte>.Shared.Return(Rented);
        }
    }

    /// <summary>Tells the sender of a synchronous message that it was matched.</summary>
    private sealed class Acknowledgement(SharedMemoryLink link, long ackId) : IDeliveryReceipt
    {
        public void Delivered() => link.Acknowledge(ackId);

        public void Failed(MpiException error)
        {
            // The job is aborting; the sender learns it from the abort.
        }
    }
}
