using System.Diagnostics;
using System.Globalization;
using Pmpi.Devices.SharedMemory;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Bench.Experiments;

/// <summary>
/// Where the in-process half round trip goes, measured piece by piece without changing PMPI: the software path of
/// one message on one thread (no hand-off), the matching engine alone, and a two-thread ping-pong on bare matching
/// engines waiting either with <c>Completion.Wait</c> (PMPI's spin-then-block) or with a plain busy spin.
/// </summary>
public static class HotPathExperiments
{
    private const int Rounds = 200_000;
    private static readonly PayloadType Bytes = new(PayloadCode.Byte, true, null);

    /// <summary>Writes one line per experiment to <paramref name="output"/>; each is the best of <paramref name="repeats"/>.</summary>
    public static void Run(TextWriter output, int repeats)
    {
        ArgumentNullException.ThrowIfNull(output);
        Report(output, "1 rank, Send(byte[8]) to self + Receive(ref buf): per message", repeats, SelfSendReceive);
        Report(output, "1 thread, engine Deliver + Post (unexpected) + Release: per message", repeats, () => EngineAlone(postFirst: false));
        Report(output, "1 thread, engine Post + Deliver (posted) + Release: per message", repeats, () => EngineAlone(postFirst: true));
        Report(output, "1 thread, both links of a shared-memory pair, Post + Send(byte[8]) + Poll + Release: per message", repeats, SharedMemoryAlone);
        Report(output, "2 threads, engines, Completion.Wait: half round trip", repeats, () => EnginePingPong(busySpin: false));
        Report(output, "2 threads, engines, busy spin on IsCompleted: half round trip", repeats, () => EnginePingPong(busySpin: true));
        Report(output, "2 threads, engines, Completion.Wait, payload rented+copied in, copied out+returned (as eager Send): half round trip", repeats, () => EnginePingPong(busySpin: false, pooled: true));
        Report(output, "2 ranks, Send/Receive byte[8] (the benchmark): half round trip", repeats, () => ApiPingPong(8, Rounds, synchronous: false));
        foreach (int n in new[] { 8192, 16384, 32768, 65536 })
        {
            // Ssend takes the device's rendezvous path (one copy, sender held until matched) at any size; Send below
            // the eager limit copies twice (into a pooled buffer, then out of it).
            Report(output, $"2 ranks, Send byte[{n}] (eager, 2 copies): half round trip", repeats, () => ApiPingPong(n, Rounds / 20, synchronous: false));
            Report(output, $"2 ranks, Ssend byte[{n}] (rendezvous, 1 copy): half round trip", repeats, () => ApiPingPong(n, Rounds / 20, synchronous: true));
        }
        Report(output, "2 threads, flag hand-off, completer writes plainly: half round trip", repeats, () => FlagPingPong(completerLocks: false));
        Report(output, "2 threads, flag hand-off, completer locks the flag's object (as Completion.TryComplete): half round trip", repeats, () => FlagPingPong(completerLocks: true));
    }

    private static void Report(TextWriter output, string what, int repeats, Func<(double Seconds, double Bytes)> experiment)
    {
        experiment(); // warm-up: JIT tiers, pools
        double best = double.MaxValue, bytes = 0;
        for (int i = 0; i < repeats; i++)
        {
            var (seconds, allocated) = experiment();
            if (seconds < best) (best, bytes) = (seconds, allocated);
        }
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{best * 1e9,8:F0} ns\t{bytes,5:F0} B allocated\t{what}"));
        output.Flush();
    }

    private static (double, double) SelfSendReceive()
    {
        (double, double) result = default;
        Environment.Run(1, world =>
        {
            var buf = new byte[8];
            long allocated = GC.GetAllocatedBytesForCurrentThread(), start = Stopwatch.GetTimestamp();
            for (int i = 0; i < Rounds; i++)
            {
                world.Send(buf, 0, 0);
                world.Receive(0, 0, ref buf);
            }
            result = Per(start, allocated, Rounds);
        });
        return result;
    }

    private static (double, double) EngineAlone(bool postFirst)
    {
        var engine = new MatchingEngine();
        var envelope = new Envelope(0, 1, 0);
        var payload = new byte[8];
        long allocated = GC.GetAllocatedBytesForCurrentThread(), start = Stopwatch.GetTimestamp();
        for (int i = 0; i < Rounds; i++)
        {
            ReceiveOperation receive;
            if (postFirst)
            {
                receive = engine.Post(envelope);
                engine.Deliver(new Message(envelope, Bytes, payload));
            }
            else
            {
                engine.Deliver(new Message(envelope, Bytes, payload));
                receive = engine.Post(envelope);
            }
            receive.Message!.Release();
        }
        return Per(start, allocated, Rounds);
    }

    // One thread plays both ranks of a same-node pair: the software of the shared-memory path, with no hand-off.
    private static (double, double) SharedMemoryAlone()
    {
        string jobKey = Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(16));
        var receiver = new MatchingEngine();
        using var sending = new SharedMemoryLink(jobKey, new MatchingEngine(), 0, 1);
        using var receiving = new SharedMemoryLink(jobKey, receiver, 1, 0);
        var envelope = new Envelope(0, 0, 0);
        var payload = new OutgoingPayload(Bytes, new byte[8], null);
        long allocated = GC.GetAllocatedBytesForCurrentThread(), start = Stopwatch.GetTimestamp();
        for (int i = 0; i < Rounds; i++)
        {
            var receive = receiver.Post(envelope);
            sending.Send(envelope, payload, synchronous: false);
            receiving.Poll();
            receive.Message!.Release();
        }
        return Per(start, allocated, Rounds);
    }

    // Two threads bounce a message through two engines, as the in-process device does, minus codecs and pools.
    private static (double, double) EnginePingPong(bool busySpin, bool pooled = false)
    {
        var engines = new[] { new MatchingEngine(), new MatchingEngine() };
        var payload = new byte[8];
        double allocatedPerRound = 0;
        void Side(int me)
        {
            int other = 1 - me;
            var inbound = new Envelope(0, other, 0);
            var outbound = new Envelope(0, me, 0);
            long allocated = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < Rounds; i++)
            {
                if (me == 0) engines[other].Deliver(Outgoing(outbound, payload, pooled));
                var receive = engines[me].Post(inbound);
                if (busySpin)
                {
                    while (!receive.IsCompleted) Thread.SpinWait(1);
                }
                else
                {
                    receive.Wait();
                }
                if (pooled) receive.Message!.Payload.Span.CopyTo(payload);
                receive.Message!.Release();
                if (me == 1) engines[other].Deliver(Outgoing(outbound, payload, pooled));
            }
            if (me == 0) allocatedPerRound = (GC.GetAllocatedBytesForCurrentThread() - allocated) / (double)Rounds;
        }
        var pong = new Thread(() => Side(1));
        pong.Start();
        long start = Stopwatch.GetTimestamp();
        Side(0);
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        pong.Join();
        return (seconds / Rounds / 2, allocatedPerRound);
    }

    private static Message Outgoing(Envelope envelope, byte[] payload, bool pooled)
    {
        if (!pooled) return new Message(envelope, Bytes, payload);
        var rented = System.Buffers.ArrayPool<byte>.Shared.Rent(payload.Length);
        payload.CopyTo(rented, 0);
        return new Message(envelope, Bytes, rented.AsMemory(0, payload.Length), rented);
    }

    private static (double, double) ApiPingPong(int size, int rounds, bool synchronous)
    {
        (double, double) result = default;
        Environment.Run(2, world =>
        {
            var buf = new byte[size];
            int peer = 1 - world.Rank;
            world.Barrier();
            long allocated = GC.GetAllocatedBytesForCurrentThread(), start = Stopwatch.GetTimestamp();
            for (int i = 0; i < rounds; i++)
            {
                if (world.Rank == 1) world.Receive(peer, 0, ref buf);
                if (synchronous) world.Ssend(buf, peer, 0);
                else world.Send(buf, peer, 0);
                if (world.Rank == 0) world.Receive(peer, 0, ref buf);
            }
            if (world.Rank == 0)
            {
                var (seconds, bytes) = Per(start, allocated, rounds);
                result = (seconds / 2, bytes);
            }
        });
        return result;
    }

    // The bare cost of a cross-thread hand-off through a completion-like object, with and without the completer's
    // lock: the waiter spins on a field in the same object whose header the lock writes.
    private static (double, double) FlagPingPong(bool completerLocks)
    {
        var flags = new[] { new Flag(), new Flag() };
        void Side(int me)
        {
            for (int i = 0; i < Rounds; i++)
            {
                if (me == 0) flags[1].Set(completerLocks);
                flags[me].WaitAndReset();
                if (me == 1) flags[0].Set(completerLocks);
            }
        }
        var pong = new Thread(() => Side(1));
        pong.Start();
        long start = Stopwatch.GetTimestamp();
        Side(0);
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        pong.Join();
        return (seconds / Rounds / 2, 0);
    }

    private sealed class Flag
    {
        private int _state;

        public void Set(bool withLock)
        {
            if (!withLock)
            {
                Volatile.Write(ref _state, 1);
                return;
            }
            lock (this) Volatile.Write(ref _state, 1);
        }

        public void WaitAndReset()
        {
            while (Volatile.Read(ref _state) == 0) Thread.SpinWait(1);
            Volatile.Write(ref _state, 0);
        }
    }

    private static (double Seconds, double Bytes) Per(long start, long allocated, int count) =>
        (Stopwatch.GetElapsedTime(start).TotalSeconds / count, (GC.GetAllocatedBytesForCurrentThread() - allocated) / (double)count);
}
