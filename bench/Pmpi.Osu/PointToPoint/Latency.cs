namespace Pmpi.Osu.PointToPoint;

/// <summary>
/// osu_latency: rank 0 sends a message of each size to rank 1 and waits for one of the same size back; the latency
/// is half the mean round trip of the timed iterations, after the warm-up ones.
/// </summary>
internal static class Latency
{
    private const int Tag = 1;

    /// <summary>The benchmark's body on each of the two ranks.</summary>
    public static void Run(Intracommunicator world, OsuOptions options, OsuReport report)
    {
        report.Preamble("Avg Latency(us)");
        int rank = world.Rank;
        foreach (int size in options.Sizes())
        {
            // OMB sends the first bytes of one large buffer; Send(byte[]) sends a whole array, so each size has arrays
            // of its own, filled as OMB fills its buffers (set_buffer_pt2pt: 'a' to send, 'b' to receive into).
            var sendBuffer = Filled(size, (byte)'a');
            var receiveBuffer = Filled(size, (byte)'b');
            int iterations = options.IterationsFor(size), skip = options.SkipFor(size);

            world.Barrier();
            double total = 0;
            for (int i = 0; i < iterations + skip; i++)
            {
                if (rank == 0)
                {
                    double start = Environment.Time;
                    world.Send(sendBuffer, 1, Tag);
                    world.Receive(1, Tag, ref receiveBuffer);
                    if (i >= skip) total += Environment.Time - start;
                }
                else
                {
                    world.Receive(0, Tag, ref receiveBuffer);
                    world.Send(sendBuffer, 0, Tag);
                }
            }

            report.Row(size, [total * 1e6 / (2.0 * iterations)]);
        }
    }

    /// <summary>An array of <paramref name="size"/> bytes, each <paramref name="value"/>.</summary>
    internal static byte[] Filled(int size, byte value)
    {
        var buffer = new byte[size];
        Array.Fill(buffer, value);
        return buffer;
    }
}
