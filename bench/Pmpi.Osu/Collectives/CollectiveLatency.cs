using Pmpi.Osu.PointToPoint;

namespace Pmpi.Osu.Collectives;

/// <summary>
/// osu_allreduce, osu_bcast and osu_alltoall: every rank times each call of the collective alone, a barrier after
/// each; a rank's latency is its mean over the timed iterations, and rank 0 prints the mean over the ranks (with
/// <c>-f</c> also the least and the greatest, and the iterations).
/// </summary>
internal static class CollectiveLatency
{
    /// <summary>osu_allreduce: MPI_Allreduce of <c>size</c> bytes summed (OMB sums chars), into a caller's array.</summary>
    public static void RunAllreduce(Intracommunicator world, OsuOptions options, OsuReport report)
    {
        LimitToMemory(world.Rank, options, options.MemoryLimit);
        byte[] sendBuffer = [], receiveBuffer = [];
        Run(world, options, report, barrierBefore: true,
            size => (sendBuffer, receiveBuffer) = (Latency.Filled(size, 1), new byte[size]),
            () => world.Allreduce(sendBuffer, Operation<byte>.Add, ref receiveBuffer));
    }

    /// <summary>osu_bcast: MPI_Bcast of <c>size</c> bytes from rank 0, into each rank's array.</summary>
    public static void RunBroadcast(Intracommunicator world, OsuOptions options, OsuReport report)
    {
        LimitToMemory(world.Rank, options, options.MemoryLimit);
        byte[] buffer = [];
        // osu_bcast, unlike the other two, has no barrier before a size's iterations, only after them.
        Run(world, options, report, barrierBefore: false,
            size => buffer = Latency.Filled(size, 1),
            () => world.Broadcast(ref buffer, 0));
    }

    /// <summary>osu_alltoall: MPI_Alltoall of <c>size</c> bytes to and from each rank.</summary>
    public static void RunAlltoall(Intracommunicator world, OsuOptions options, OsuReport report)
    {
        // The buffers hold a block for every rank: OMB caps the size so that they stay within the memory limit.
        LimitToMemory(world.Rank, options, Math.Min(options.MemoryLimit, Array.MaxLength) / world.Size);
        byte[] sendBuffer = [], receiveBuffer = [];
        int size = 0;
        Run(world, options, report, barrierBefore: true,
            s => (size, sendBuffer, receiveBuffer) = (s, Latency.Filled(s * world.Size, 1), new byte[s * world.Size]),
            () => world.AlltoallFlattened(sendBuffer, size, ref receiveBuffer));
    }

    // The loop all three share (osu_allreduce.c, osu_bcast.c, osu_alltoall.c): prepare the buffers for a size, then
    // time each call alone and synchronise after it.
    private static void Run(Intracommunicator world, OsuOptions options, OsuReport report, bool barrierBefore,
        Action<int> prepare, Action collective)
    {
        if (options.Full) report.Preamble("Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations");
        else report.Preamble("Avg Latency(us)");
        foreach (int size in options.Sizes())
        {
            prepare(size);
            int iterations = options.IterationsFor(size), skip = options.SkipFor(size);
            if (barrierBefore) world.Barrier();
            double timer = 0;
            for (int i = 0; i < iterations + skip; i++)
            {
                double start = Environment.Time;
                collective();
                double stop = Environment.Time;
                world.Barrier();
                if (i >= skip) timer += stop - start;
            }
            if (!barrierBefore) world.Barrier();

            double latency = timer * 1e6 / iterations;
            double min = world.Reduce(latency, Operation<double>.Min, 0);
            double max = world.Reduce(latency, Operation<double>.Max, 0);
            double average = world.Reduce(latency, Operation<double>.Add, 0) / world.Size;
            if (options.Full) report.Row(size, [average, min, max], iterations);
            else report.Row(size, [average]);
            if (barrierBefore) world.Barrier();
        }
    }

    // OMB's check_mem_limit: a largest size whose buffers would pass the limit is lowered to it, with a warning.
    private static void LimitToMemory(int rank, OsuOptions options, long largest)
    {
        if (!options.LowerMaxSizeTo(largest)) return;
        if (rank == 0) Console.Error.WriteLine($"Warning! Limiting max message size to: {largest}. Increase -M, --mem-limit for higher message sizes.");
    }
}
