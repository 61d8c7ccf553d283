namespace Pmpi.Osu.PointToPoint;

/// <summary>
/// osu_mbw_mr: the world's first half sends windows to its second half, rank r to rank r + N/2 (OMB relies on block
/// ordering: put the pairs' halves on different nodes to measure between nodes), every pair at once. Each timed
/// iteration starts from a barrier; each sender's window is acknowledged with one byte. The bandwidth is the bytes
/// all pairs moved over the senders' mean time, in MB/s (10^6 bytes), and the message rate is that over the size.
/// Unlike osu_bw, OMB runs the same 100 iterations (and 10 warm-up) at every size.
/// </summary>
internal static class MultiPairBandwidth
{
    private const int DataTag = 100, AcknowledgementTag = 101;

    /// <summary>The benchmark's body on each rank.</summary>
    public static void Run(Intracommunicator world, OsuOptions options, OsuReport report)
    {
        int rank = world.Rank, pairs = world.Size / 2, window = options.WindowSize;
        // osu_mbw_mr prints its header line without print_preamble's empty line, then the pairs and the window.
        report.Header();
        report.Line($"# [ pairs: {pairs} ] [ window size: {window} ]");
        report.Line(OsuReport.DatatypeLine);
        if (options.PrintRate) report.Columns("MB/s", "Messages/s");
        else report.Columns("MB/s");

        // The senders' times are summed among the senders alone (OMB splits the world by rank < pairs per size; one
        // split serves every size here, outside any timed loop).
        var side = world.Split(rank < pairs ? 1 : 0, 0)!;
        var requests = new Request[window];
        var acknowledgement = new byte[1];
        foreach (int size in options.Sizes())
        {
            var sendBuffer = Latency.Filled(size, (byte)'a');
            var receiveBuffer = Latency.Filled(size, (byte)'b');
            int iterations = options.Iterations, skip = options.Skip;

            world.Barrier();
            double total = 0;
            for (int i = 0; i < iterations + skip; i++)
            {
                // OMB's two barriers per iteration. With an odd world the last rank has no pair; it takes part in the
                // barriers (in OMB it skips the second and the job hangs at the end).
                world.Barrier();
                world.Barrier();
                if (rank < pairs)
                {
                    int target = rank + pairs;
                    double start = Environment.Time;
                    for (int j = 0; j < window; j++) requests[j] = world.ImmediateSend(sendBuffer, target, DataTag);
                    Bandwidth.WaitAll(requests);
                    world.Receive(target, AcknowledgementTag, ref acknowledgement);
                    if (i >= skip) total += Environment.Time - start;
                }
                else if (rank < 2 * pairs)
                {
                    int target = rank - pairs;
                    for (int j = 0; j < window; j++) requests[j] = world.ImmediateReceive(target, DataTag, receiveBuffer);
                    Bandwidth.WaitAll(requests);
                    world.Send(acknowledgement, target, AcknowledgementTag);
                }
            }

            double meanTime = side.Reduce(total, Operation<double>.Add, 0) / pairs;
            double bandwidth = size / 1e6 * pairs * iterations * window / meanTime;
            if (options.PrintRate) report.Row(size, [bandwidth, 1e6 * bandwidth / size]);
            else report.Row(size, [bandwidth]);
        }
    }
}
