namespace Pmpi.Osu.PointToPoint;

/// <summary>
/// osu_bw and osu_bibw: a window of nonblocking sends (64 by default, <c>-W</c>) of each size, completed together,
/// per timed iteration. In osu_bw rank 0 sends and rank 1 acknowledges each window with one byte; in osu_bibw both
/// ranks send a window to the other at once. The bandwidth is the bytes rank 0 saw moved (both ways for bibw) over
/// the timed iterations' time, in MB/s (10^6 bytes).
/// </summary>
internal static class Bandwidth
{
    private const int DataTag = 100, AcknowledgementTag = 101, ReverseTag = 10;

    /// <summary>osu_bw on each of the two ranks.</summary>
    public static void RunUnidirectional(Intracommunicator world, OsuOptions options, OsuReport report) =>
        Run(world, options, report, bidirectional: false);

    /// <summary>osu_bibw on each of the two ranks.</summary>
    public static void RunBidirectional(Intracommunicator world, OsuOptions options, OsuReport report) =>
        Run(world, options, report, bidirectional: true);

    private static void Run(Intracommunicator world, OsuOptions options, OsuReport report, bool bidirectional)
    {
        report.Preamble("Bandwidth (MB/s)");
        int rank = world.Rank, peer = 1 - rank, window = options.WindowSize;
        var sends = new Request[window];
        var receives = new Request[window];
        var acknowledgement = new byte[1];
        foreach (int size in options.Sizes())
        {
            // As OMB's default single buffer: every send of a window sends one array, every receive fills one array.
            var sendBuffer = Latency.Filled(size, (byte)'a');
            var receiveBuffer = Latency.Filled(size, (byte)'b');
            int iterations = options.IterationsFor(size), skip = options.SkipFor(size);

            world.Barrier();
            double total = 0;
            for (int i = 0; i < iterations + skip; i++)
            {
                double start = Environment.Time;
                if (bidirectional)
                {
                    // Rank 0 receives on tag 10 and sends on 100, rank 1 the other way round, as osu_bibw does; each
                    // posts its receives first. Rank 0 completes its sends first, rank 1 its receives.
                    int receiveTag = rank == 0 ? ReverseTag : DataTag, sendTag = rank == 0 ? DataTag : ReverseTag;
                    for (int j = 0; j < window; j++) receives[j] = world.ImmediateReceive(peer, receiveTag, receiveBuffer);
                    for (int j = 0; j < window; j++) sends[j] = world.ImmediateSend(sendBuffer, peer, sendTag);
                    if (rank == 0)
                    {
                        WaitAll(sends);
                        WaitAll(receives);
                    }
                    else
                    {
                        WaitAll(receives);
                        WaitAll(sends);
                    }
                }
                else if (rank == 0)
                {
                    for (int j = 0; j < window; j++) sends[j] = world.ImmediateSend(sendBuffer, 1, DataTag);
                    WaitAll(sends);
                    world.Receive(1, AcknowledgementTag, ref acknowledgement);
                }
                else
                {
                    for (int j = 0; j < window; j++) receives[j] = world.ImmediateReceive(0, DataTag, receiveBuffer);
                    WaitAll(receives);
                    world.Send(acknowledgement, 0, AcknowledgementTag);
                }
                if (i >= skip) total += Environment.Time - start;
            }

            double megabytes = size / 1e6 * iterations * window * (bidirectional ? 2 : 1);
            report.Row(size, [megabytes / total]);
        }
    }

    /// <summary>Waits for every request in turn (MPI_Waitall).</summary>
    internal static void WaitAll(Request[] requests)
    {
        foreach (var request in requests) request.Wait();
    }
}
