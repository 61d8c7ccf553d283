using System.Globalization;

namespace Pmpi.Bench.Overlap;

/// <summary>
/// How much of a nonblocking allreduce hides behind computation, as bench/native/overlap.c (osu_iallreduce's method),
/// statement for statement: per size, the blocking Allreduce; ImmediateAllreduce + Wait alone (pure); a computation
/// as long as that alone; ImmediateAllreduce, the computation, then Wait (total); overlap = 100 (1 - (total - compute)
/// / pure), within 0..100. The computation makes no PMPI call, so only progress made apart from the program's calls
/// counts. Lines <c>iallreduce\tsize\tallreduce_us\tpure_us\tcompute_us\ttotal_us\toverlap_pct</c> from rank 0.
/// </summary>
public static class OverlapBenchmark
{
    /// <summary>Message sizes in bytes, as in overlap.c.</summary>
    public static readonly int[] Sizes = [8, 65536, 1 << 20];

    private enum Mode { Blocking, Pure, Compute, Total }

    private static double s_sink;

    /// <summary>The rank body: every rank times each mode and size; rank 0 writes the lines to <paramref name="output"/>.</summary>
    public static void Run(Intracommunicator world, TextWriter output, int[] sizes, bool quick)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        var input = new double[(1 << 20) / sizeof(double)];
        for (int i = 0; i < input.Length; i++) input[i] = world.Rank + i;
        foreach (int n in sizes)
        {
            var values = input[..Math.Max(1, n / sizeof(double))];
            int iterations = Collectives.CollectivesBenchmark.IterationsFor(n, quick);
            double blocking = Time(world, Mode.Blocking, values, iterations, 0);
            double pure = Time(world, Mode.Pure, values, iterations, 0);
            double work = Time(world, Mode.Compute, values, iterations, pure);
            double total = Time(world, Mode.Total, values, iterations, pure);
            double overlap = Math.Clamp(100 * (1 - (total - work) / pure), 0, 100);
            if (world.Rank == 0)
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"iallreduce\t{n}\t{blocking * 1e6:F2}\t{pure * 1e6:F2}\t{work * 1e6:F2}\t{total * 1e6:F2}\t{overlap:F1}"));
                output.Flush();
            }
        }
    }

    /// <summary>Arithmetic for <paramref name="seconds"/>, no PMPI call but the clock.</summary>
    private static void Compute(double seconds)
    {
        double start = Environment.Time, x = 1;
        while (Environment.Time - start < seconds)
            for (int i = 0; i < 100; i++) x = x * 1.000001 + 1e-9;
        Volatile.Write(ref s_sink, x);
    }

    /// <summary>Mean seconds per iteration of one mode, the maximum over ranks.</summary>
    private static double Time(Intracommunicator world, Mode mode, double[] values, int iterations, double work)
    {
        var result = new double[values.Length];
        int warm = iterations / 10;
        double t0 = 0;
        for (int i = 0; i < iterations + warm; i++)
        {
            if (i == warm)
            {
                world.Barrier();
                t0 = Environment.Time;
            }
            switch (mode)
            {
                case Mode.Blocking:
                    world.Allreduce(values, Operation<double>.Add, ref result);
                    break;
                case Mode.Pure:
                    world.ImmediateAllreduce(values, Operation<double>.Add, result).Wait();
                    break;
                case Mode.Compute:
                    Compute(work);
                    break;
                case Mode.Total:
                    var request = world.ImmediateAllreduce(values, Operation<double>.Add, result);
                    Compute(work);
                    request.Wait();
                    break;
            }
        }
        double mine = (Environment.Time - t0) / iterations;
        return world.Allreduce(mine, Operation<double>.Max);
    }
}
