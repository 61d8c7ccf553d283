using System.Globalization;

namespace Pmpi.Bench.Collectives;

/// <summary>
/// The collective latency of bench/native/collectives.c, statement for statement: Allreduce (sum of doubles) and
/// Broadcast (bytes from rank 0) per size, the slowest rank's mean time per call, as <c>operation\tsize\tus</c> lines
/// from rank 0.
/// </summary>
public static class CollectivesBenchmark
{
    /// <summary>Message sizes in bytes, as in collectives.c.</summary>
    public static readonly int[] Sizes = [8, 64, 1024, 8192, 65536, 1 << 20];

    /// <summary>Timed calls per size: 20000 up to 8 KB, 500 up to 64 KB, 50 above; a tenth when <paramref name="quick"/> (as collectives.c).</summary>
    public static int IterationsFor(int size, bool quick)
    {
        int iterations = size <= 8192 ? 20000 : (size <= 65536 ? 500 : 50);
        return quick ? iterations / 10 : iterations;
    }

    /// <summary>The rank body: every rank times each operation and size of <paramref name="sizes"/>; rank 0 writes the lines to <paramref name="output"/>.</summary>
    public static void Run(Intracommunicator world, TextWriter output, int[] sizes, bool quick)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        foreach (var (name, isAllreduce) in new[] { ("allreduce", true), ("bcast", false) })
        {
            foreach (int n in sizes)
            {
                double seconds = TimeOperation(world, isAllreduce, n, IterationsFor(n, quick));
                if (world.Rank == 0)
                {
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name}\t{n}\t{seconds * 1e6:F2}"));
                    output.Flush();
                }
            }
        }
    }

    /// <summary>Mean seconds per call of one operation on <paramref name="size"/> bytes, the maximum over ranks.</summary>
    private static double TimeOperation(Intracommunicator world, bool isAllreduce, int size, int iterations)
    {
        var values = new double[size / sizeof(double)];
        for (int i = 0; i < values.Length; i++) values[i] = world.Rank + i;
        var result = new double[values.Length];
        var bytes = new byte[size];
        int warm = iterations / 10;
        double t0 = 0;
        for (int i = 0; i < iterations + warm; i++)
        {
            if (i == warm)
            {
                world.Barrier();
                t0 = Environment.Time;
            }
            if (isAllreduce) world.Allreduce(values, Operation<double>.Add, ref result);
            else world.Broadcast(ref bytes, 0);
        }
        double mine = (Environment.Time - t0) / iterations;
        return world.Reduce(mine, Operation<double>.Max, 0);
    }
}
