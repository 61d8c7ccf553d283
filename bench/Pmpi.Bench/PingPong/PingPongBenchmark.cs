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
    /// The rank body: ranks 0 and 1 bounce a byte[] of each size; rank 0 writes one line per size to
    /// <paramref name="output"/>. With <paramref name="details"/>, it adds the bytes rank 0 allocated per round trip
    /// and the gen-0 collections during the timed loop, as comment lines (which run.sh ignores). <paramref name="quick"/>
    /// runs a tenth of the iterations, as <c>pingpong --quick</c> does.
    /// </summary>
    public static void Run(Intracommunicator world, TextWriter output, bool details, bool quick)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        if (world.Size != 2) throw new ArgumentException($"The ping-pong needs exactly 2 ranks; this world has {world.Size}.", nameof(world));
        int rank = world.Rank;
        foreach (int n in Sizes)
        {
            // pingpong.c sends the first n bytes of one 16 MB buffer; Send(byte[]) sends a whole array, so each size
            // gets an array of exactly n bytes, filled like the C buffer.
            var buf = new byte[n];
            Array.Fill(buf, (byte)1);
            int iters = IterationsFor(n, quick);
            int warm = iters / 10;
            double t0 = 0;
            long allocated0 = 0;
            int gen0 = 0;
            for (int i = 0; i < iters + warm; i++)
            {
                if (i == warm)
                {
                    world.Barrier();
                    allocated0 = GC.GetAllocatedBytesForCurrentThread();
                    gen0 = GC.CollectionCount(0);
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
            long allocated = GC.GetAllocatedBytesForCurrentThread() - allocated0;
            gen0 = GC.CollectionCount(0) - gen0;
            if (rank == 0)
            {
                double half = t / iters / 2;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n}\t{half * 1e6:F2}\t{n / half / 1e6:F1}"));
                if (details)
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# {n}: rank 0 allocated {allocated / (double)iters:F0} B per round trip; {gen0} gen-0 GCs"));
                output.Flush();
            }
        }
    }
}
