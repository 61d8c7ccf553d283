using Pmpi.Matching;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// One direction of a pair's shared memory: a single-producer, single-consumer byte stream in a ring of
/// <see cref="Capacity"/> bytes, after a control block whose indices sit on cache lines of their own (the producer
/// writes only the tail, the consumer only the head). Each side keeps the other's index as it last read it and reads
/// it again only when that leaves too little to go on, and the consumer hands bytes back (<see cref="Release"/>) once
/// per batch of records rather than per read, so a small message moves the index lines between the cores once each
/// way instead of once per piece of a record. Either side spins briefly when it must wait, then sleeps on a
/// doorbell word the other side rings, so a rank that waits for minutes uses no CPU; a side says it sleeps by counting
/// itself in (its rank's reader and a thread in the middle of a record may both sleep on one ring), and the other side
/// rings once for each change in who sleeps, not for every message while a woken sleeper waits for a core. The peer is a
/// process that may be faulty: indices that make no sense end the stream with an error, and no read or write leaves
/// the ring.
/// </summary>
internal sealed unsafe class ByteRing : IDisposable
{
    /// <summary>Bytes of the control block before the ring: four 64-byte cache lines.</summary>
    public const int ControlSize = 256;

    private const int HeadOffset = 0, TailOffset = 64, DataSignalOffset = 128, ConsumerSleepingOffset = 132, SpaceSignalOffset = 192, ProducerSleepingOffset = 196;
    private static readonly TimeSpan SleepSlice = TimeSpan.FromMilliseconds(500);
    // Briefly: a partner on another core answers within microseconds, and beyond that a spinning thread only takes
    // the core a rank needs when ranks outnumber cores.
    private static readonly long SpinTicks = SpinPolicy.Brief.Ticks;
    // A sleeping word counts its sleepers in its low 16 bits and their sleeps above them, so it changes whenever a
    // thread begins or ends a sleep.
    private const int SleeperMask = 0xFFFF, FallingAsleep = (1 << 16) + 1;

    private readonly byte* _control;
    private readonly byte* _data;
    private readonly Doorbell _dataBell;
    private readonly Doorbell _spaceBell;
    private readonly Func<bool> _closed;
    private readonly Action? _sleeping;
    private long _position; // how far this side has written (the producer) or read (the consumer)
    private long _seen; // the other side's index (the head or the tail) as this side last read it
    private long _released; // the consumer's head as it last published it
    private int _rungFor; // the other side's sleeping word when this side last rang its doorbell
    private long _nextRewindLook; // the producer's position from which it looks again whether it may rewind

    /// <param name="start">The control block; the ring follows it.</param>
    /// <param name="capacity">Bytes of the ring, a power of two.</param>
    /// <param name="name">Names the ring's doorbells (on Windows, named events).</param>
    /// <param name="closed">Whether this side is closing: a waiting read or write then gives up.</param>
    /// <param name="sleeping">Told when this side stops spinning to sleep (<see cref="Matching.IPolledLinks.Sleeping"/>).</param>
    public ByteRing(byte* start, int capacity, string name, Func<bool> closed, Action? sleeping = null)
    {
        _control = start;
        _data = start + ControlSize;
        Capacity = capacity;
        _dataBell = Doorbell.For(name + "-data");
        _spaceBell = Doorbell.For(name + "-space");
        _closed = closed;
        _sleeping = sleeping;
        RewindFrom = Math.Min(4096, capacity / 4);
    }

    public int Capacity { get; }

    /// <summary>How far into a lap of the ring the producer writes before it looks whether it may rewind (<see cref="TryRewind"/>): a page.</summary>
    public int RewindFrom { get; }

    private ref long Head => ref *(long*)(_control + HeadOffset);

    private ref long Tail => ref *(long*)(_control + TailOffset);

    private int* DataSignal => (int*)(_control + DataSignalOffset);

    private int* ConsumerSleeping => (int*)(_control + ConsumerSleepingOffset);

    private int* SpaceSignal => (int*)(_control + SpaceSignalOffset);

    private int* ProducerSleeping => (int*)(_control + ProducerSleepingOffset);

    /// <summary>
    /// Producer: appends all of <paramref name="first"/> and then <paramref name="second"/>, waiting for room as the
    /// consumer drains the ring; published at once when both fit, so the consumer never sees the first alone.
    /// </summary>
    /// <exception cref="ObjectDisposedException">This side closed while waiting.</exception>
    /// <exception cref="InvalidDataException">The consumer's index is out of range.</exception>
    public void Write(ReadOnlySpan<byte> first, ReadOnlySpan<byte> second = default)
    {
        int total = first.Length + second.Length;
        if (Room(total) >= total)
        {
            CopyIn(first);
            CopyIn(second);
            Publish();
            return;
        }
        WritePiecewise(first);
        WritePiecewise(second);
    }

    /// <summary>Producer: appends all of <paramref name="bytes"/> if the ring has room for them now, else nothing; whether it did.</summary>
    /// <exception cref="InvalidDataException">The consumer's index is out of range.</exception>
    public bool TryWrite(ReadOnlySpan<byte> bytes)
    {
        if (Room(bytes.Length) < bytes.Length) return false;
        Write(bytes);
        return true;
    }

    /// <summary>
    /// Producer, before a record of <paramref name="length"/> bytes: if this side is <see cref="RewindFrom"/> or more,
    /// and at least the record, into the ring's lap, and the consumer has handed back everything, writes
    /// <paramref name="marker"/> (which the consumer answers with <see cref="SkipToLapEnd"/>) and skips the rest of the
    /// lap without touching it, so the record goes at the ring's start, in one piece (until the consumer skips too,
    /// the producer has room for only as much as it was into the lap); published with the record. Whether it did.
    /// Pairs that exchange messages smaller than a page then keep to the ring's first pages, warm in both caches: tmpfs
    /// gives a page as it is first written (15 µs each on a paravirtualised guest), and a ring lapped in full holds half
    /// a megabyte per pair and direction, 2 GB on a node of 64 ranks that all talk. The producer looks at the
    /// consumer's head at most once per <see cref="RewindFrom"/> bytes.
    /// </summary>
    public bool TryRewind(byte marker, long length)
    {
        int at = (int)(_position & (Capacity - 1));
        if (at < RewindFrom || at < length || _position < _nextRewindLook) return false;
        long head = Volatile.Read(ref Head);
        if (head != _position)
        {
            _nextRewindLook = _position + RewindFrom;
            return false;
        }
        _seen = head;
        _data[at] = marker;
        _position += Capacity - at;
        return true;
    }

    /// <summary>Consumer, after a rewind's marker: skips to the lap's end, as the producer did.</summary>
    /// <exception cref="InvalidDataException">The producer has not written that far.</exception>
    public void SkipToLapEnd()
    {
        int rest = (int)(-_position & (Capacity - 1));
        if (Available(rest) < rest) throw new InvalidDataException($"a rewind {rest} bytes before the ring's end, past what the peer wrote");
        _position += rest;
    }

    /// <summary>Producer: what fits now, reading the consumer's head again only if the last one read leaves less than <paramref name="wanted"/>.</summary>
    private int Room(int wanted)
    {
        int room = Capacity - (int)(_position - _seen);
        if (room >= wanted) return room;
        long head = Volatile.Read(ref Head), used = _position - head;
        if (used < 0 || used > Capacity) throw Corrupt("head", used);
        _seen = head;
        return Capacity - (int)used;
    }

    private void WritePiecewise(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            int room = Room(bytes.Length);
            if (room == 0)
            {
                Await(() => Room(1) > 0, SpaceSignal, ProducerSleeping, _spaceBell);
                continue;
            }
            int count = Math.Min(room, bytes.Length);
            CopyIn(bytes[..count]);
            Publish();
            bytes = bytes[count..];
        }
    }

    /// <summary>Producer: makes what was copied in visible to the consumer.</summary>
    private void Publish()
    {
        Volatile.Write(ref Tail, _position);
        Signal(DataSignal, ConsumerSleeping, _dataBell);
    }

    /// <summary>Consumer: whether the producer has written bytes this side has not read (a hint, unless the caller holds the consumer's side).</summary>
    public bool HasData => Volatile.Read(ref Tail) != _position;

    /// <summary>
    /// Consumer: says this side sleeps until the producer writes, and returns what to sleep on
    /// (<see cref="Doorbell.WaitAny"/>); look at <see cref="HasData"/> once more before sleeping, and call
    /// <see cref="AwakeForData"/> after.
    /// </summary>
    public Doorbell.Watch SleepUntilData()
    {
        int seen = Volatile.Read(ref *DataSignal);
        Interlocked.Add(ref *ConsumerSleeping, FallingAsleep);
        return new Doorbell.Watch(_dataBell, DataSignal, seen);
    }

    /// <summary>Consumer: no longer sleeps (after <see cref="SleepUntilData"/>).</summary>
    public void AwakeForData() => Interlocked.Decrement(ref *ConsumerSleeping);

    /// <summary>
    /// Consumer: fills <paramref name="destination"/> from the stream, waiting for the producer as needed. What it
    /// reads stays the consumer's until <see cref="Release"/>, or until it must wait or has read a quarter of the ring.
    /// </summary>
    /// <exception cref="ObjectDisposedException">This side closed while waiting.</exception>
    /// <exception cref="InvalidDataException">The producer's index is out of range.</exception>
    public void ReadExactly(Span<byte> destination)
    {
        while (!destination.IsEmpty)
        {
            int available = Available(destination.Length);
            if (available == 0)
            {
                // The producer may be waiting for room to write the rest of this very record.
                Release();
                Await(() => Available(1) > 0, DataSignal, ConsumerSleeping, _dataBell);
                continue;
            }
            int count = Math.Min(available, destination.Length);
            CopyOut(destination[..count]);
            if (_position - _released >= Capacity / 4) Release();
            destination = destination[count..];
        }
    }

    /// <summary>Consumer: gives the bytes read so far back to the producer, waking it if it waits for room.</summary>
    public void Release()
    {
        if (_released == _position) return;
        _released = _position;
        Volatile.Write(ref Head, _position);
        Signal(SpaceSignal, ProducerSleeping, _spaceBell);
    }

    /// <summary>Consumer: what can be read now, reading the producer's tail again only if the last one read leaves less than <paramref name="wanted"/>.</summary>
    private int Available(int wanted)
    {
        long available = _seen - _position;
        if (available >= wanted) return (int)available;
        long tail = Volatile.Read(ref Tail);
        available = tail - _position;
        if (available < 0 || available > Capacity) throw Corrupt("tail", available);
        _seen = tail;
        return (int)available;
    }

    public void Dispose()
    {
        _dataBell.Dispose();
        _spaceBell.Dispose();
    }

    /// <summary>Wakes whoever sleeps on this ring, either side (so a closing reader notices at once).</summary>
    public void WakeSleepers()
    {
        _dataBell.Ring(DataSignal);
        _spaceBell.Ring(SpaceSignal);
    }

    private void CopyIn(ReadOnlySpan<byte> bytes)
    {
        int at = (int)(_position & (Capacity - 1)), first = Math.Min(bytes.Length, Capacity - at);
        bytes[..first].CopyTo(new Span<byte>(_data + at, first));
        if (first < bytes.Length) bytes[first..].CopyTo(new Span<byte>(_data, bytes.Length - first));
        _position += bytes.Length;
    }

    private void CopyOut(Span<byte> destination)
    {
        int at = (int)(_position & (Capacity - 1)), first = Math.Min(destination.Length, Capacity - at);
        new ReadOnlySpan<byte>(_data + at, first).CopyTo(destination);
        if (first < destination.Length) new ReadOnlySpan<byte>(_data, destination.Length - first).CopyTo(destination[first..]);
        _position += destination.Length;
    }

    /// <summary>
    /// Counts the move and rings the other side's doorbell if it said it sleeps, unless this side rang already since
    /// anyone there fell asleep or woke: on a node whose ranks outnumber its cores, a woken sleeper may wait
    /// milliseconds for a core, and a ring per message meanwhile cost a futex call each, 6 % of the CPU of a loop of
    /// small broadcasts (docs/bench-log/2026-11-28-doorbell-once-per-sleep.md). A Windows event wakes one sleeper a
    /// ring: the next wakes after the first counts out.
    /// </summary>
    private void Signal(int* signal, int* sleeping, Doorbell bell)
    {
        Interlocked.Increment(ref *signal);
        int sleepers = Volatile.Read(ref *sleeping);
        if ((sleepers & SleeperMask) == 0 || sleepers == _rungFor) return;
        _rungFor = sleepers;
        bell.Ring(signal);
    }

    /// <summary>Spins a little, then sleeps on <paramref name="signal"/> until <paramref name="ready"/> holds (saying so first).</summary>
    private void Await(Func<bool> ready, int* signal, int* sleeping, Doorbell bell)
    {
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        var spinner = new SpinWait();
        while (System.Diagnostics.Stopwatch.GetTimestamp() - start < SpinTicks)
        {
            if (ready()) return;
            spinner.SpinOnce(sleep1Threshold: -1);
        }
        if (!ready()) _sleeping?.Invoke();
        while (!ready())
        {
            if (_closed()) throw new ObjectDisposedException(nameof(ByteRing), "The shared-memory link closed.");
            int seen = Volatile.Read(ref *signal);
            Interlocked.Add(ref *sleeping, FallingAsleep);
            // Looked at again after saying so: a move between the check above and here has rung or changed the signal.
            if (!ready()) bell.Wait(signal, seen, SleepSlice);
            Interlocked.Decrement(ref *sleeping);
        }
    }

    private InvalidDataException Corrupt(string index, long distance) =>
        new($"The peer's {index} index is {distance} bytes from this side's in a ring of {Capacity}: the shared memory is corrupt.");
}
