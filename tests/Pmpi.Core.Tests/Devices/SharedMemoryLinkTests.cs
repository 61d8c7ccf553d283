using System.Runtime.InteropServices;
using Pmpi.Devices;
using Pmpi.Devices.SharedMemory;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;

namespace Pmpi.Tests.Devices;

/// <summary>
/// The shared-memory link's parts: the byte ring carries any stream across its wrap-around, goes back to its start
/// once drained, and refuses indices that make no sense; a link reading records that are not records aborts its rank naming both ranks; and two links of a
/// pair carry messages both ways with synchronous sends acknowledged; a segment's name lasts only until both ranks
/// mapped it, or its maker ended, or the agent removed what killed ranks left.
/// </summary>
public sealed unsafe class SharedMemoryLinkTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public void ByteRing_StreamLongerThanTheRing_ArrivesIntactAcrossWrapArounds()
    {
        // Arrange: a 64-byte ring, producer and consumer on two threads, chunk sizes that never align with it.
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-consumer", () => false);
        var sent = Enumerable.Range(0, 100_000).Select(i => (byte)(i * 7 + i / 256)).ToArray();
        var received = new byte[sent.Length];

        // Act
        var writing = new Thread(() =>
        {
            for (int at = 0, chunk = 1; at < sent.Length; at += chunk, chunk = chunk % 97 + 1)
                producer.Write(sent.AsSpan(at, Math.Min(chunk, sent.Length - at)));
        });
        writing.Start();
        for (int at = 0, chunk = 3; at < received.Length; at += chunk, chunk = chunk % 89 + 3)
            consumer.ReadExactly(received.AsSpan(at, Math.Min(chunk, received.Length - at)));
        Assert.True(writing.Join(Timeout), "The producer did not finish.");

        // Assert
        Assert.Equal(sent, received);
    }

    [Fact]
    public void ByteRing_RecordThatFits_PublishedOnceAndHandedBackOnlyWhenReleased()
    {
        // Arrange: a header and a payload that fit the ring together; the control block's head, tail and data signal.
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-once-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-once-consumer", () => false);
        ref long head = ref *(long*)memory;
        ref long tail = ref *(long*)(memory + 64);
        ref int dataSignal = ref *(int*)(memory + 128);
        byte[] header = [1, 2, 3, 4, 5], payload = [6, 7, 8];

        // Act
        producer.Write(header, payload);
        var read = new byte[8];
        consumer.ReadExactly(read.AsSpan(0, 5));
        consumer.ReadExactly(read.AsSpan(5));
        long headBeforeRelease = head;
        consumer.Release();

        // Assert: one publish of both pieces; the consumer's reads reach the producer only once released.
        Assert.Equal(8, tail);
        Assert.Equal(1, dataSignal);
        Assert.Equal(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 }, read);
        Assert.Equal(0, headBeforeRelease);
        Assert.Equal(8, head);
    }

    [Fact]
    public void ByteRing_TailBeyondTheRing_RefusedAsCorrupt()
    {
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var consumer = new ByteRing(memory, capacity, "test-corrupt", () => false);
        *(long*)(memory + 64) = 1_000_000; // the tail index: far past what a 64-byte ring can hold

        var error = Assert.Throws<InvalidDataException>(() => consumer.ReadExactly(new byte[1]));

        Assert.Contains("tail index is 1000000 bytes", error.Message);
    }

    [Fact]
    public void ByteRing_RecordOnceTheConsumerHandedEverythingBack_RewindsToTheRingsStart()
    {
        // Arrange: a 64-byte ring (rewinds from 16 bytes into a lap; the consumer hands back every 16 bytes read); 20
        // bytes written, half read; then the rest read and 20 more written and read.
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-rewind-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-rewind-consumer", () => false);
        ref long tail = ref *(long*)(memory + 64);
        byte[] record = [21, 22, 23, 24, 25, 26, 27, 28];
        producer.Write(new byte[20]);
        consumer.ReadExactly(new byte[10]);
        bool rewoundWhileUnread = producer.TryRewind(0xFF, record.Length);
        consumer.ReadExactly(new byte[10]);
        producer.Write(new byte[20]);
        consumer.ReadExactly(new byte[20]);

        // Act
        bool tooLong = producer.TryRewind(0xFF, 41); // more than the 40 bytes before the rewind point
        bool rewound = producer.TryRewind(0xFF, record.Length);
        producer.Write(record);
        var marker = new byte[1];
        consumer.ReadExactly(marker);
        consumer.SkipToLapEnd();
        var read = new byte[record.Length];
        consumer.ReadExactly(read);

        // Assert: the marker where the producer was, the record at the ring's start, published once, read intact.
        Assert.False(rewoundWhileUnread);
        Assert.False(tooLong);
        Assert.True(rewound);
        Assert.Equal(0xFF, marker[0]);
        Assert.Equal(record, new ReadOnlySpan<byte>(memory + ByteRing.ControlSize, record.Length).ToArray());
        Assert.Equal(capacity + record.Length, tail);
        Assert.Equal(record, read);
    }

    [Fact]
    public void ByteRing_RecordsEachReadBeforeTheNext_StayInTheRingsFirstPage()
    {
        // Arrange: a 256 KB ring and 10,000 records of 100 bytes, 4 times its size, each read before the next is written,
        // as the link writes and reads them (a marker of 0xFF, which no record starts with, says the producer rewound).
        const int capacity = 256 * 1024, length = 100;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-first-page-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-first-page-consumer", () => false);
        var record = new byte[length];
        var read = new byte[length];
        int rewinds = 0;

        // Act
        for (int i = 0; i < 10_000; i++)
        {
            record.AsSpan().Fill((byte)(i % 251));
            if (producer.TryRewind(0xFF, length)) rewinds++;
            producer.Write(record);
            consumer.ReadExactly(read.AsSpan(0, 1));
            if (read[0] == 0xFF)
            {
                consumer.SkipToLapEnd();
                consumer.ReadExactly(read.AsSpan(0, 1));
            }
            consumer.ReadExactly(read.AsSpan(1));
            consumer.Release();
            Assert.Equal(record, read);
        }

        // Assert: a rewind every 41 records; nothing written beyond the first page and the record that crosses it.
        Assert.Equal(10_000 / 41, rewinds);
        var untouched = new ReadOnlySpan<byte>(memory + ByteRing.ControlSize + producer.RewindFrom + length, capacity - producer.RewindFrom - length);
        Assert.Equal(-1, untouched.IndexOfAnyExcept((byte)0));
    }

    [Fact]
    public void ByteRing_RewindPastWhatTheProducerWrote_RefusedAsCorrupt()
    {
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-bad-rewind-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-bad-rewind-consumer", () => false);
        producer.Write(new byte[20]);
        consumer.ReadExactly(new byte[10]);

        var error = Assert.Throws<InvalidDataException>(consumer.SkipToLapEnd);

        Assert.Contains("a rewind 54 bytes before the ring's end, past what the peer wrote", error.Message);
    }

    [Fact]
    public void ByteRing_SleeperFallingAsleepWhileTheOneRungBeforeIsNotYetUp_IsRungByTheNextWrite()
    {
        // Arrange: a consumer thread said it sleeps and was rung by a write, but has not yet counted itself awake (on a
        // busy node it waits for a core); a second thread falls asleep on the ring's data signal meanwhile.
        if (!OperatingSystem.IsLinux()) return; // the sleeper is found among the process's threads by its futex call
        const int capacity = 64;
        using var ring = new RingMemory(capacity);
        var memory = ring.Start;
        using var producer = new ByteRing(memory, capacity, "test-rung-producer", () => false);
        using var consumer = new ByteRing(memory, capacity, "test-rung-consumer", () => false);
        int* dataSignal = (int*)(memory + 128);
        consumer.SleepUntilData();
        producer.Write([1]);
        var second = consumer.SleepUntilData();
        using var bell = Doorbell.For("test-rung-second");
        var sleeper = new Thread(() => bell.Wait(dataSignal, second.Expected, Timeout)) { IsBackground = true };
        sleeper.Start();
        int futex = RuntimeInformation.ProcessArchitecture == Architecture.Arm64 ? 98 : 202; // as Doorbell's
        string futexWait = $"{futex} 0x{(long)dataSignal:x} "; // futex(word, ...): /proc's view of a thread in that call
        Assert.True(SpinWait.SpinUntil(() => Directory.GetDirectories("/proc/self/task").Any(task => ReadSyscall(task).StartsWith(futexWait, StringComparison.Ordinal)), Timeout), "The second thread never slept.");

        // Act
        producer.Write([2]);

        // Assert: the write rang for the second sleeper, though the first still counts as asleep.
        Assert.True(sleeper.Join(TimeSpan.FromSeconds(5)), "The second sleeper was not rung.");

        static string ReadSyscall(string task)
        {
            try
            {
                return File.ReadAllText(Path.Combine(task, "syscall"));
            }
            catch (IOException)
            {
                return ""; // the thread ended
            }
        }
    }

    [Fact]
    public void Reader_RungAfterDispose_ByTheRankThreadAndByAReceiveItSleptOn_CorruptsNoFreedMemory()
    {
        // Arrange: a receive nothing sends to, slept on until the rank thread gives up; its wake-up stays with it.
        var (engines, zero, one) = NewPair();
        using var _ = one;
        var reader = Reader(engines[0], zero);
        var receive = engines[0].Post(new Envelope(0, 1, 7));
        Assert.False(reader.SleepOn(receive));

        // Act: the reader goes first, as it does when a rank ends; then, as the rank's network links close, its
        // thread says it sleeps and the receive fails, each ringing one of the reader's bells.
        reader.Dispose();
        reader.Sleeping();
        engines[0].Abort(new MpiException(ErrorClass.Transport, "the network links closed"));

        // Assert: the receive failed, and memory this thread allocates next is whole. A bell's word freed by Dispose
        // and then rung would leave a freed chunk's link misaligned, which glibc's allocator (on Linux) aborts the
        // process for at the second allocation of that size.
        Assert.True(receive.IsCompleted);
        var first = NativeMemory.Alloc(sizeof(int));
        var second = NativeMemory.Alloc(sizeof(int));
        NativeMemory.Free(first);
        NativeMemory.Free(second);
    }

    [Fact]
    public void Reader_DisposedAfterAnAbort_LeavesTheRingsMappedForThreadsStillLeavingThem()
    {
        // Arrange: rank 0 aborted, as when its job fails while other threads of it are in a wait.
        var (engines, zero, one) = NewPair();
        using var _ = one;
        var reader = Reader(engines[0], zero);
        engines[0].Abort(new MpiException(ErrorClass.Transport, "a peer failed"));

        // Act: the rank ends; then a thread late out of its wait looks at the incoming ring, and an acknowledgement
        // queued to the thread pool writes the outgoing one.
        reader.Dispose();
        one.Send(new Envelope(0, 1, 1), Payload([1]), synchronous: false);
        bool lateLook = zero.Incoming.HasData;
        zero.Send(new Envelope(0, 0, 2), Payload([2]), synchronous: false);

        // Assert: both touched mapped memory (unmapped, either would have ended the process) and saw the peer's side.
        Assert.True(lateLook);
        Assert.True(one.Incoming.HasData);
    }

    [Fact]
    public void Link_PairOfRanks_CarriesMessagesBothWaysAndAcknowledgesSynchronousSends()
    {
        // Arrange
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);
        var big = Enumerable.Range(0, 3_000_000).Select(i => (byte)i).ToArray();

        // Act: a message larger than the ring each way, then a synchronous one.
        zero.Send(new Envelope(0, 0, 1), Payload(big), synchronous: false);
        one.Send(new Envelope(0, 1, 2), Payload([1, 2, 3]), synchronous: false);
        var ssend = zero.Send(new Envelope(0, 0, 3), Payload([9]), synchronous: true);
        var atOne = Receive(engines[1], source: 0, tag: 1);
        var atZero = Receive(engines[0], source: 1, tag: 2);
        Assert.False(ssend.IsCompleted);
        var synchronous = Receive(engines[1], source: 0, tag: 3);

        // Assert
        Assert.Equal(big, atOne);
        Assert.Equal([1, 2, 3], atZero);
        Assert.Equal([9], synchronous);
        Assert.True(SpinWait.SpinUntil(() => ssend.IsCompleted, Timeout), "The synchronous send was not acknowledged once matched.");
    }

    [Fact]
    public void Link_SmallMessagesEachReceivedBeforeTheNext_ArriveIntactAcrossTheRingsRewinds()
    {
        // Arrange: 10,000 messages of 100 bytes, twice the ring: the sender rewinds to the ring's start every page or so.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);

        for (int i = 0; i < 10_000; i++)
        {
            var bytes = Enumerable.Repeat((byte)(i % 251), 100).ToArray();

            // Act
            zero.Send(new Envelope(0, 0, i), Payload(bytes), synchronous: false);
            var received = Receive(engines[1], source: 0, tag: i);

            // Assert
            Assert.Equal(bytes, received);
        }
        Assert.Null(engines[1].AbortReason);
    }

    [Fact]
    public void Link_LargeArrayForAReceiveThatReturnsANewArray_ReadStraightIntoThatArray()
    {
        // Arrange: both receives posted first, as a receive that returns a new array.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);
        var large = Enumerable.Range(0, 300_000).Select(i => i * 0.5).ToArray();
        var small = new[] { 1.5, 2.5 };
        var largeReceive = engines[1].Post(new Envelope(0, 0, 1), returnsNewArray: true);
        var smallReceive = engines[1].Post(new Envelope(0, 0, 2), returnsNewArray: true);

        // Act
        zero.Send(new Envelope(0, 0, 1), Codec<double[]>.Instance.Encode(large, PayloadSettings.Default), synchronous: false);
        zero.Send(new Envelope(0, 0, 2), Codec<double[]>.Instance.Encode(small, PayloadSettings.Default), synchronous: false);
        Assert.True(SpinWait.SpinUntil(() => largeReceive.IsCompleted && smallReceive.IsCompleted, Timeout), "The arrays did not arrive.");
        var largeReceived = Codec<double[]>.Instance.Decode(largeReceive.Message!, PayloadSettings.Default);
        var smallReceived = Codec<double[]>.Instance.Decode(smallReceive.Message!, PayloadSettings.Default);

        // Assert: the large one is the link's own array, the small one a copy out of a pooled buffer.
        Assert.Same(largeReceive.Message!.Elements, largeReceived);
        Assert.Equal(large, largeReceived);
        Assert.Null(smallReceive.Message!.Elements);
        Assert.Equal(small, smallReceived);
    }

    [Theory]
    [InlineData(10_000)] // 80 KB: through the ring
    [InlineData(300_000)] // 2.4 MB: lent, once rank 1 has read a first message
    public void Link_LargeArrayForABlockingReceiveIntoTheCallersArray_ReadStraightIntoIt(int length)
    {
        // Arrange: receives posted first, into arrays that can hold the message, one that cannot, and from any source.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);
        zero.Send(new Envelope(0, 0, 9), Payload([1]), synchronous: false);
        Assert.Equal([1], Receive(engines[1], source: 0, tag: 9));
        var sent = Enumerable.Range(0, length).Select(i => i * 0.25).ToArray();
        var (exact, longer, tooShort, anySource) = (new double[length], new double[length + 5], new double[length - 1], new double[length]);
        var receives = new[]
        {
            engines[1].Post(new Envelope(0, 0, 1), into: ReceiveTarget.Of(exact)),
            engines[1].Post(new Envelope(0, 0, 2), into: ReceiveTarget.Of(longer)),
            engines[1].Post(new Envelope(0, 0, 3), into: ReceiveTarget.Of(tooShort)),
            engines[1].Post(new Envelope(0, MatchingEngine.AnySource, 4), into: ReceiveTarget.Of(anySource)),
        };

        // Act
        for (int tag = 1; tag <= 4; tag++) zero.Send(new Envelope(0, 0, tag), Codec<double[]>.Instance.Encode(sent, PayloadSettings.Default), synchronous: false);
        Assert.True(SpinWait.SpinUntil(() => receives.All(r => r.IsCompleted), Timeout), "The arrays did not arrive.");

        // Assert: read into the arrays that hold it whole, through a pooled buffer otherwise.
        Assert.Equal([true, true, false, false], receives.Select(r => r.Message!.Elements is not null));
        Assert.Same(exact, receives[0].Message!.Elements);
        Assert.Same(longer, receives[1].Message!.Elements);
        Assert.Equal(sent, exact);
        Assert.Equal(sent, longer[..length]);
        double[]? into = longer;
        Assert.Equal(length, ((RawArrayCodec<double>)Codec<double[]>.Instance).DecodeInto(receives[1].Message!, ref into));
        Assert.Same(longer, into);
        Assert.Equal(sent, longer[..length]);
    }

    [Fact]
    public void Link_LargeMessageOnceThePeerCanReadThisRank_IsLentWithoutWaitingForTheRingAndCompletesWhenCopied()
    {
        // Arrange: rank 1's reader runs only once rank 1 has read a first message, which lets it check it can read
        // rank 0's memory; then no one reads, so a payload written through the 512 KB ring would block the send.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        zero.Send(new Envelope(0, 0, 1), Payload([1]), synchronous: false);
        Assert.True(SpinWait.SpinUntil(one.Poll, Timeout), "Rank 1 read nothing.");
        var big = Enumerable.Range(0, 4 * 1024 * 1024).Select(i => (byte)(i * 31 + i / 7)).ToArray();

        // Act
        SendOperation? lent = null;
        var sending = new Thread(() => lent = zero.Send(new Envelope(0, 0, 2), Payload(big), synchronous: false)) { IsBackground = true };
        sending.Start();
        Assert.True(sending.Join(Timeout), "The send waited for room in the ring: the payload was not lent.");
        bool completedUnread = lent!.IsCompleted;
        using var readerOfOne = Reader(engines[1], one);
        var received = Receive(engines[1], source: 0, tag: 2);

        // Assert: the send returned before anyone read, and completed once rank 1 had copied it.
        Assert.False(completedUnread);
        Assert.Equal(big, received);
        Assert.True(SpinWait.SpinUntil(() => lent.IsCompleted, Timeout), "The lent send was not acknowledged once copied.");
        Assert.Null(lent.Error);
    }

    [Fact]
    public void Link_LentSynchronousSend_CompletesOnlyWhenMatched()
    {
        // Arrange: a first message lets rank 1 check it can read rank 0's memory.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);
        zero.Send(new Envelope(0, 0, 1), Payload([1]), synchronous: false);
        Assert.Equal([1], Receive(engines[1], source: 0, tag: 1));
        var big = Enumerable.Range(0, 1024 * 1024).Select(i => (byte)(i * 13)).ToArray();

        // Act: copied at once by rank 1's reader, but not yet matched.
        var ssend = zero.Send(new Envelope(0, 0, 2), Payload(big), synchronous: true);
        var probe = engines[1].PostProbe(new Envelope(0, 0, 2));
        Assert.True(SpinWait.SpinUntil(() => probe.IsCompleted, Timeout), "The message did not arrive.");
        bool completedUnmatched = ssend.IsCompleted;
        var received = Receive(engines[1], source: 0, tag: 2);

        // Assert
        Assert.False(completedUnmatched);
        Assert.Equal(big, received);
        Assert.True(SpinWait.SpinUntil(() => ssend.IsCompleted, Timeout), "The synchronous send was not acknowledged once matched.");
    }

    [Fact]
    public void Reader_SleepOnUntilNothingArrives_GivesUpLeavingTheReceiveToTheReader()
    {
        // Arrange: rank 0 waits for a message rank 1 sends only after the waiting thread stopped sleeping on the rings.
        var (engines, zero, one) = NewPair();
        using var readerOfZero = Reader(engines[0], zero);
        using var readerOfOne = Reader(engines[1], one);
        var receive = engines[0].Post(new Envelope(0, 1, 3));

        // Act
        bool completed = readerOfZero.SleepOn(receive);
        readerOfZero.Sleeping();
        one.Send(new Envelope(0, 1, 3), Payload([9, 8, 7]), synchronous: false);

        // Assert
        Assert.False(completed);
        Assert.True(SpinWait.SpinUntil(() => receive.IsCompleted, Timeout), "The reader did not take the rings over.");
        Assert.Equal([9, 8, 7], receive.Message!.Payload.ToArray());
    }

    [Fact]
    public void Link_PeerWritesARecordThatIsNotOne_AbortsTheRankNamingBoth()
    {
        // Arrange: rank 0's link, and rank 1's side of the same segment written by hand.
        string key = Guid.NewGuid().ToString("N");
        var engine = new MatchingEngine();
        var zero = new SharedMemoryLink(key, engine, rank: 0, peer: 1);
        using var reader = Reader(engine, zero);
        using var one = PairSegment.Open(key, 1, 0, () => false);

        // Act
        one.Outgoing.Write([7, 0, 0, 0]);
        var deadline = DateTime.UtcNow + Timeout;
        while (engine.AbortReason is null && DateTime.UtcNow < deadline) Thread.Sleep(10);

        // Assert
        Assert.NotNull(engine.AbortReason);
        Assert.Equal(ErrorClass.Transport, engine.AbortReason.ErrorClass);
        Assert.Contains("Shared memory from rank 1 to rank 0 is corrupt: a record of kind 7", engine.AbortReason.Message);
    }

    [Theory]
    [InlineData(0, 0, 8, "a payload type 0/0")]
    [InlineData(19, 0, 8, "a payload type 19/0")]
    [InlineData(1, 2, 8, "a payload type 1/2")]
    [InlineData(1, 1, -1, "a payload of -1 bytes")]
    [InlineData(1, 1, (long)int.MaxValue + 1, "a payload of 2147483648 bytes")]
    public void Link_PeerWritesADataRecordWithABadTypeOrLength_AbortsTheRankNamingIt(int code, byte array, long length, string named)
    {
        // Arrange: rank 0's link, and a data record from rank 1 written by hand (kind, context, source, tag, ack id,
        // type code, array flag, no type name, payload length), each with one field out of range.
        string key = Guid.NewGuid().ToString("N");
        var engine = new MatchingEngine();
        var zero = new SharedMemoryLink(key, engine, rank: 0, peer: 1);
        using var reader = Reader(engine, zero);
        using var one = PairSegment.Open(key, 1, 0, () => false);
        var record = new byte[36];
        record[0] = 1;
        BitConverter.TryWriteBytes(record.AsSpan(21), code);
        record[25] = array;
        BitConverter.TryWriteBytes(record.AsSpan(26), ushort.MaxValue);
        BitConverter.TryWriteBytes(record.AsSpan(28), length);

        // Act
        one.Outgoing.Write(record);
        var deadline = DateTime.UtcNow + Timeout;
        while (engine.AbortReason is null && DateTime.UtcNow < deadline) Thread.Sleep(10);

        // Assert
        Assert.NotNull(engine.AbortReason);
        Assert.Equal(ErrorClass.Transport, engine.AbortReason.ErrorClass);
        Assert.Contains($"Shared memory from rank 1 to rank 0 is corrupt: {named}", engine.AbortReason.Message);
    }

    [LinuxFact]
    public void Segment_PeerNeverMapsIt_ItsNameGoesWhenTheMakerEnds()
    {
        // Arrange
        string key = Guid.NewGuid().ToString("N");
        string path = Path.Combine(SharedMemoryNames.Directory, SharedMemoryNames.Of(key, 0, 1));
        var zero = PairSegment.Open(key, 0, 1, () => false);
        try
        {
            Assert.True(File.Exists(path), $"{path} was not made.");

            // Act
            zero.Dispose();

            // Assert
            Assert.False(File.Exists(path), $"{path} outlived the only rank that mapped it.");
        }
        finally
        {
            File.Delete(path);
        }
    }

    [LinuxFact]
    public void Reader_DisposedAfterAnAbortBeforeThePeerMappedIt_RemovesTheSegmentsName()
    {
        // Arrange: rank 0's link, which its peer never maps, and rank 0 aborted.
        string key = Guid.NewGuid().ToString("N");
        string path = Path.Combine(SharedMemoryNames.Directory, SharedMemoryNames.Of(key, 0, 1));
        var engine = new MatchingEngine();
        var reader = Reader(engine, new SharedMemoryLink(key, engine, rank: 0, peer: 1));
        try
        {
            Assert.True(File.Exists(path), $"{path} was not made.");
            engine.Abort(new MpiException(ErrorClass.Transport, "a peer failed"));

            // Act
            reader.Dispose();

            // Assert: its memory stays mapped (Reader_DisposedAfterAnAbort_LeavesTheRingsMappedForThreadsStillLeavingThem), its name goes.
            Assert.False(File.Exists(path), $"{path} outlived the aborted rank that made it.");
        }
        finally
        {
            File.Delete(path);
        }
    }

    [LinuxFact]
    public void Segment_BothMapIt_ItsNameGoesAtOnceAndTheMemoryStaysShared()
    {
        // Arrange
        string key = Guid.NewGuid().ToString("N");
        string path = Path.Combine(SharedMemoryNames.Directory, SharedMemoryNames.Of(key, 0, 1));
        using var zero = PairSegment.Open(key, 0, 1, () => false);
        using var one = PairSegment.Open(key, 1, 0, () => false);

        // Act
        zero.Outgoing.Write([42]);
        Span<byte> read = stackalloc byte[1];
        one.Incoming.ReadExactly(read);

        // Assert
        Assert.False(File.Exists(path), $"{path} outlived both ranks' mapping it.");
        Assert.Equal(42, read[0]);
    }

    [LinuxFact]
    public void RemoveLeftovers_EndedRanks_RemovesTheirPairsOfThatJobOnly()
    {
        // Arrange: names as ranks killed before their peers came leave them, in two jobs.
        string job = Guid.NewGuid().ToString("N"), other = Guid.NewGuid().ToString("N");
        string[] names = [SharedMemoryNames.Of(job, 0, 1), SharedMemoryNames.Of(job, 1, 2), SharedMemoryNames.Of(job, 2, 3), SharedMemoryNames.Of(other, 0, 1)];
        var paths = names.Select(name => Path.Combine(SharedMemoryNames.Directory, name)).ToArray();
        try
        {
            foreach (var path in paths) File.WriteAllBytes(path, []);

            // Act: ranks 0 and 1 of the first job ended.
            int removed = SharedMemoryNames.RemoveLeftovers(job, [0, 1]);

            // Assert
            Assert.Equal(2, removed);
            Assert.Equal([false, false, true, true], paths.Select(File.Exists));
        }
        finally
        {
            foreach (var path in paths) File.Delete(path);
        }
    }

    /// <summary>The links of ranks 0 and 1 of a new pair, each with its rank's engine.</summary>
    private static (MatchingEngine[] Engines, SharedMemoryLink Zero, SharedMemoryLink One) NewPair()
    {
        string key = Guid.NewGuid().ToString("N");
        var engines = new[] { new MatchingEngine(), new MatchingEngine() };
        return (engines, new SharedMemoryLink(key, engines[0], rank: 0, peer: 1), new SharedMemoryLink(key, engines[1], rank: 1, peer: 0));
    }

    /// <summary>The rank's reader of <paramref name="link"/>, which also unmaps it when disposed.</summary>
    private static SharedMemoryReader Reader(MatchingEngine engine, SharedMemoryLink link)
    {
        var reader = new SharedMemoryReader(engine);
        reader.Add([link]);
        return reader;
    }

    private static OutgoingPayload Payload(byte[] bytes) => new(new PayloadType(PayloadCode.Byte, IsArray: true, TypeName: null), bytes, Rented: null);

    private static byte[] Receive(MatchingEngine engine, int source, int tag)
    {
        var receive = engine.Post(new Envelope(0, source, tag));
        Assert.True(SpinWait.SpinUntil(() => receive.IsCompleted, Timeout), $"Nothing from rank {source} with tag {tag}.");
        var message = receive.Message!;
        var bytes = message.Payload.ToArray();
        message.Release();
        return bytes;
    }

    /// <summary>Zeroed memory for a ring of <paramref name="capacity"/> bytes and its control block, freed on dispose.</summary>
    private readonly struct RingMemory(int capacity) : IDisposable
    {
        public byte* Start { get; } = (byte*)NativeMemory.AllocZeroed((nuint)(ByteRing.ControlSize + capacity));

        public void Dispose() => NativeMemory.Free(Start);
    }
}
