using System.Diagnostics;
using System.Globalization;

namespace Pmpi.Bench.PingPong;

/// <summary>
/// The ping-pong of bench/native/pingpong.c, statement for statement: same sizes, iteration counts, warm-up,
/// barrier and timer, and the same output line <c>size\thalf_rtt_us\tMB/s</c> from rank 0, so the two tables line up.
/// </summary>
public static class PingPongBenchmark
{
    /// <summary>Message sizes in bytes, as in pingpong.c.</summary>
    public static readonly int[] Sizes = [1, 8, 64, 1024, 8192, 65536, 1 << 20, 4 << 20, 16 << 20];

    /// <summary>Timed round trips for a size, as in pingpong.c: 20000 up to 8 KB, 5000 up to 64 KB, 200 above; a tenth when <paramref name="quick"/>.</summary>
    public static int IterationsFor(int size, bool quick)
    {
        int iterations = size <= 8192 ? 20000 : (size <= 65536 ? 5000 : 200);
        return quick ? iterations / 10 : iterations;
    }

    /// <summary>
    /// The rank body: ranks 0 and 1 bounce a byte[] of each of <paramref name="sizes"/>; rank 0 writes one line per size to
    /// <paramref name="output"/>. With <paramref name="counters"/>, ranks 0 and 1 also write, as pingpong.c's
    /// <c>--counters</c> does,
    /// <c># counters\trank\tsize\tvoluntary\tinvoluntary\tallocated\tgen0\tround_trips\tpid\tstart\tend</c>: their
    /// process's context switches (every thread's), bytes allocated and gen-0 collections per round trip over the timed
    /// loop; then the loop's round trips, and its window in monotonic nanoseconds, in which bench/counters.sh counts the
    /// process's system calls (run.sh ignores # lines). <paramref name="quick"/> runs a tenth of the iterations, as
    /// <c>pingpong --quick</c> does.
    /// </summary>
    public static void Run(Intracommunicator world, TextWriter output, IEnumerable<int> sizes, bool counters, bool quick)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(sizes);
        if (world.Size != 2) throw new ArgumentException($"The ping-pong needs exactly 2 ranks; this world has {world.Size}.", nameof(world));
        int rank = world.Rank;
        foreach (int n in sizes)
        {
            // pingpong.c sends the first n bytes of one 16 MB buffer; Send(byte[]) sends a whole array, so each size
            // gets an array of exactly n bytes, filled like the C buffer.
            var buf = new byte[n];
            Array.Fill(buf, (byte)1);
            int iters = IterationsFor(n, quick);
            int warm = iters / 10;
            double t0 = 0;
            var before = default(ProcessCounters);
            long start = 0;
            for (int i = 0; i < iters + warm; i++)
            {
                if (i == warm)
                {
                    world.Barrier();
                    if (counters)
                    {
                        before = ProcessCounters.Read();
                        start = MonotonicNanoseconds();
                    }
                    t0 = Environment.Time;
                }
                if (rank == 0)
                {
                    world.Send(buf, 1, 0);
                    world.Receive(1, 0, ref buf);
                }
                else
                {
                    world.Receive(0, 0, ref buf);
                    world.Send(buf, 0, 0);
                }
            }
            double t = Environment.Time - t0;
            long end = MonotonicNanoseconds();
            var spent = counters ? ProcessCounters.Read() - before : default;
            if (rank == 0)
            {
                double half = t / iters / 2;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n}\t{half * 1e6:F2}\t{n / half / 1e6:F1}"));
            }
            if (counters && rank < 2)
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"# counters\t{rank}\t{n}\t{spent.Voluntary / (double)iters:F2}\t{spent.Involuntary / (double)iters:F2}\t{spent.Allocated / (double)iters:F0}\t{spent.Gen0 / (double)iters:F4}"
                    + $"\t{iters}\t{System.Environment.ProcessId}\t{start}\t{end}"));
            }
            output.Flush();
        }
    }

    /// <summary>On Linux, Stopwatch reads CLOCK_MONOTONIC: the clock that <c>perf record -k CLOCK_MONOTONIC</c> stamps system calls with.</summary>
    private static long MonotonicNanoseconds() => (long)(Stopwatch.GetTimestamp() * (1e9 / Stopwatch.Frequency));
}

/// <summary>What a process has spent so far: context switches of all its threads (Linux), bytes allocated, gen-0 collections.</summary>
internal readonly record struct ProcessCounters(long Voluntary, long Involuntary, long Allocated, int Gen0)
{
    public static ProcessCounters Read()
    {
        long voluntary = 0, involuntary = 0;
        if (Directory.Exists("/proc/self/task"))
        {
            foreach (var task in Directory.EnumerateDirectories("/proc/self/task"))
            {
                try
                {
                    foreach (var line in File.ReadLines(Path.Combine(task, "status")))
                    {
                        if (line.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal)) voluntary += Value(line);
                        else if (line.StartsWith("nonvoluntary_ctxt_switches:", StringComparison.Ordinal)) involuntary += Value(line);
                    }
                }
                catch (IOException)
                {
                    // The thread ended while being read.
                }
            }
        }
        return new(voluntary, involuntary, GC.GetTotalAllocatedBytes(precise: false), GC.CollectionCount(0));
    }

    public static ProcessCounters operator -(ProcessCounters after, ProcessCounters before) =>
        new(after.Voluntary - before.Voluntary, after.Involuntary - before.Involuntary, after.Allocated - before.Allocated, after.Gen0 - before.Gen0);

    private static long Value(string line) => long.Parse(line.AsSpan(line.IndexOf(':', StringComparison.Ordinal) + 1).Trim(), CultureInfo.InvariantCulture);
}
