namespace Pmpi.Osu;

/// <summary>
/// Picks the benchmark the first argument names, reads its options and checks the world's size as OMB does (bad
/// usage first, then the ranks), and runs it; only rank 0 writes.
/// </summary>
internal static class OsuProgram
{
    /// <summary>Runs the command line <paramref name="args"/> on this rank of <paramref name="world"/>.</summary>
    /// <returns>The process's exit code: 0 when the benchmark ran or help was asked for, 1 for a bad command line or world.</returns>
    public static int Run(Intracommunicator world, IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        bool root = world.Rank == 0;
        if (args.Count == 0 || args[0] is "-h" or "--help")
        {
            if (root) (args.Count == 0 ? error : output).Write(Usage());
            return args.Count == 0 ? 1 : 0;
        }
        if (Benchmark.Find(args[0]) is not { } benchmark)
        {
            if (root) error.Write($"Unknown benchmark '{args[0]}'.\n\n{Usage()}");
            return 1;
        }

        var (options, request, problem) = OsuOptions.Parse(benchmark.Kind, args.Skip(1).ToList());
        switch (request)
        {
            case OsuRequest.Help:
                if (root) output.Write(OsuOptions.Usage(benchmark));
                return 0;
            case OsuRequest.Version:
                if (root) output.WriteLine(benchmark.Header);
                return 0;
            case OsuRequest.BadUsage:
                // OMB's print_bad_usage_message: the message and option on stderr, then the usage on stdout.
                if (root)
                {
                    error.Write($"{problem}\n\n");
                    output.Write(OsuOptions.Usage(benchmark));
                }
                return 1;
        }
        if (benchmark.RefusalFor(world.Size) is { } refusal)
        {
            if (root) error.WriteLine(refusal);
            return 1;
        }

        benchmark.Run(world, options, new OsuReport(benchmark, output, root));
        return 0;
    }

    private static string Usage()
    {
        var usage = new System.Text.StringBuilder("Usage: pmpi run -n N Pmpi.Osu.dll BENCHMARK [options]   (BENCHMARK -h lists its options)\nBenchmarks (OMB 7.4's programs):\n");
        foreach (var benchmark in Benchmark.All) usage.Append($"  {benchmark.Command,-11}{benchmark.OmbName,-15}{benchmark.Title}\n");
        return usage.ToString();
    }
}
