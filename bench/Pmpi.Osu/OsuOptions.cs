using System.Globalization;
using System.Text;

namespace Pmpi.Osu;

/// <summary>What a command line asks for besides running the benchmark.</summary>
internal enum OsuRequest
{
    /// <summary>Run the benchmark with the options read.</summary>
    Run,

    /// <summary><c>-h</c>: print the usage and exit 0.</summary>
    Help,

    /// <summary><c>-v</c>: print the header line and exit 0.</summary>
    Version,

    /// <summary>An option OMB would refuse: print why and the usage, and exit 1.</summary>
    BadUsage,
}

/// <summary>
/// A benchmark's settings, with OMB 7.4's defaults for its kind (osu_util.h, osu_util.c's process_options) and the
/// options OMB reads for it: <c>-m [MIN:]MAX</c>, <c>-i ITER</c>, <c>-x ITER</c>, <c>-W SIZE</c> (bandwidth),
/// <c>-R 0|1</c> (mbw_mr), <c>-f</c> and <c>-M SIZE</c> (collectives), <c>-h</c>, <c>-v</c>, each also in its long form.
/// </summary>
internal sealed class OsuOptions
{
    /// <summary>Above this size, OMB switches to its large-message iteration and warm-up counts (LARGE_MESSAGE_SIZE).</summary>
    public const int LargeMessageSize = 8192;

    private const int MaxPointToPointSize = 1 << 22, MaxCollectiveSize = 1 << 20;
    private const long DefaultMemoryLimit = 512L * 1024 * 1024, LowestMemoryLimit = 1024 * 1024;

    // OMB's options in one order for every benchmark; each benchmark shows those of its kind.
    private static readonly OptionSpec[] Specs =
    [
        new('h', "help", null, ["print this help"]),
        new('v', "version", null, ["print version info"]),
        new('f', "full", null, ["print full format listing (MIN/MAX latency and ITERATIONS", "displayed in addition to AVERAGE latency)"], BenchmarkKind.Collective),
        new('m', "message-size", "[MIN:]MAX", ["[MIN:]MAX - set the minimum and/or the maximum message size to MIN and/or MAX",
            "bytes respectively. Examples:", "-m 128      // min = default, max = 128", "-m 2:128    // min = 2, max = 128", "-m 2:       // min = 2, max = default"]),
        new('W', "window-size", "SIZE", ["SIZE - set number of messages to send before synchronization (default 64)"], BenchmarkKind.Bandwidth, BenchmarkKind.MultiPair),
        new('R', "print-rate", "0|1", ["0|1 - print the message rate beside the bandwidth (default 1)"], BenchmarkKind.MultiPair),
        new('i', "iterations", "ITER", ["ITER - number of iterations for timing (default {iterations})"]),
        new('x', "warmup", "ITER", ["ITER - set number of warmup", "iterations to skip before timing (default {skip})"]),
        new('M', "mem-limit", "SIZE", ["SIZE - set per process maximum memory consumption to SIZE bytes", $"(default {DefaultMemoryLimit})"], BenchmarkKind.Collective),
    ];

    private OsuOptions(BenchmarkKind kind)
    {
        Kind = kind;
        (MinSize, MaxSize, Iterations, Skip, IterationsLarge, SkipLarge) = kind switch
        {
            BenchmarkKind.Latency => (0, MaxPointToPointSize, 10000, 100, 1000, 10),
            BenchmarkKind.Collective => (1, MaxCollectiveSize, 1000, 100, 100, 10),
            _ => (1, MaxPointToPointSize, 100, 10, 20, 2),
        };
    }

    /// <summary>The benchmark's kind, which set the defaults.</summary>
    public BenchmarkKind Kind { get; }

    /// <summary>The first message size in bytes (<c>-m MIN:</c>); defaults to 0 for latency, else 1.</summary>
    public int MinSize { get; private set; }

    /// <summary>The last message size in bytes (<c>-m MAX</c>); defaults to 4 MB point to point, 1 MB for collectives.</summary>
    public int MaxSize { get; private set; }

    /// <summary>Timed iterations up to <see cref="LargeMessageSize"/> (<c>-i</c> sets both counts).</summary>
    public int Iterations { get; private set; }

    /// <summary>Timed iterations above <see cref="LargeMessageSize"/>.</summary>
    public int IterationsLarge { get; private set; }

    /// <summary>Untimed warm-up iterations up to <see cref="LargeMessageSize"/> (<c>-x</c> sets both counts).</summary>
    public int Skip { get; private set; }

    /// <summary>Untimed warm-up iterations above <see cref="LargeMessageSize"/>.</summary>
    public int SkipLarge { get; private set; }

    /// <summary>Messages in flight before each synchronisation of the bandwidth tests (<c>-W</c>); defaults to 64.</summary>
    public int WindowSize { get; private set; } = 64;

    /// <summary>Whether mbw_mr prints the message rate beside the bandwidth (<c>-R</c>); defaults to true.</summary>
    public bool PrintRate { get; private set; } = true;

    /// <summary>Whether collectives print min, max and iterations beside the average (<c>-f</c>); defaults to false.</summary>
    public bool Full { get; private set; }

    /// <summary>Bytes a collective's buffers may take per process (<c>-M</c>); defaults to 536,870,912 (512 MB).</summary>
    public long MemoryLimit { get; private set; } = DefaultMemoryLimit;

    /// <summary>The timed iterations at <paramref name="size"/>: OMB takes fewer above <see cref="LargeMessageSize"/>.</summary>
    public int IterationsFor(int size) => size > LargeMessageSize ? IterationsLarge : Iterations;

    /// <summary>The warm-up iterations at <paramref name="size"/>.</summary>
    public int SkipFor(int size) => size > LargeMessageSize ? SkipLarge : Skip;

    /// <summary>Lowers <see cref="MaxSize"/> to <paramref name="largest"/> if it is above; whether it was.</summary>
    public bool LowerMaxSizeTo(long largest)
    {
        if (MaxSize <= largest) return false;
        MaxSize = (int)largest;
        return true;
    }

    /// <summary>The sizes OMB sweeps: from <see cref="MinSize"/> doubling up to <see cref="MaxSize"/> (0 is followed by 1).</summary>
    public IEnumerable<int> Sizes()
    {
        for (long size = MinSize; size <= MaxSize; size = size == 0 ? 1 : size * 2) yield return (int)size;
    }

    /// <summary>
    /// Reads <paramref name="args"/> (the options after the subcommand) as OMB's getopt does for <paramref name="kind"/>:
    /// short options with their value attached or next (<c>-m1:64</c>, <c>-m 1:64</c>), long ones with <c>=</c> or next.
    /// </summary>
    /// <returns>The options, what the command line asks for, and for a bad usage OMB's message with the option.</returns>
    public static (OsuOptions Options, OsuRequest Request, string? Error) Parse(BenchmarkKind kind, IReadOnlyList<string> args)
    {
        var options = new OsuOptions(kind);
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            OptionSpec? spec;
            string? value = null;
            if (arg.StartsWith("--", StringComparison.Ordinal) && arg.Length > 2)
            {
                int equals = arg.IndexOf('=', StringComparison.Ordinal);
                string name = equals < 0 ? arg[2..] : arg[2..equals];
                if (equals >= 0) value = arg[(equals + 1)..];
                spec = Array.Find(Specs, s => s.Long == name && s.AppliesTo(kind));
                if (spec is null) return (options, OsuRequest.BadUsage, $"Invalid option [{arg}]");
            }
            else if (arg.StartsWith('-') && arg.Length > 1)
            {
                spec = Array.Find(Specs, s => s.Short == arg[1] && s.AppliesTo(kind));
                if (spec is null) return (options, OsuRequest.BadUsage, $"Invalid option [-{arg[1]}]");
                if (arg.Length > 2)
                {
                    if (spec.Value is null) return (options, OsuRequest.BadUsage, $"Invalid option [{arg}]");
                    value = arg[2..];
                }
            }
            else
            {
                return (options, OsuRequest.BadUsage, $"Invalid argument [{arg}]");
            }

            if (spec.Value is not null && value is null)
            {
                if (i + 1 >= args.Count) return (options, OsuRequest.BadUsage, $"Option Missing Required Argument [-{spec.Short}]");
                value = args[++i];
            }
            if (spec.Value is null && value is not null) return (options, OsuRequest.BadUsage, $"Invalid option [{arg}]");

            if (spec.Short == 'h') return (options, OsuRequest.Help, null);
            if (spec.Short == 'v') return (options, OsuRequest.Version, null);
            if (options.Apply(spec.Short, value) is { } error) return (options, OsuRequest.BadUsage, $"{error} [-{spec.Short} {value}]");
        }
        return (options, OsuRequest.Run, null);
    }

    /// <summary>The usage OMB's -h prints for <paramref name="benchmark"/>, as this program is run.</summary>
    public static string Usage(Benchmark benchmark)
    {
        var defaults = new OsuOptions(benchmark.Kind);
        var usage = new StringBuilder();
        string ranks = benchmark.Kind is BenchmarkKind.Latency or BenchmarkKind.Bandwidth ? "2" : "N";
        usage.AppendLine(CultureInfo.InvariantCulture, $"Usage: pmpi run -n {ranks} Pmpi.Osu.dll {benchmark.Command} [options]   (OMB's {benchmark.OmbName})");
        usage.AppendLine("Options:");
        foreach (var spec in Specs.Where(s => s.AppliesTo(benchmark.Kind)))
        {
            for (int line = 0; line < spec.Help.Length; line++)
            {
                string text = spec.Help[line].Replace("{iterations}", $"{defaults.Iterations}", StringComparison.Ordinal)
                    .Replace("{skip}", $"{defaults.Skip}", StringComparison.Ordinal);
                // OMB's layout: "  -%c, --%-20s" for an option's first line, 28 spaces before each further one.
                usage.AppendLine(line == 0 ? $"  -{spec.Short}, --{spec.Long,-20}{text}" : $"{"",28}{text}");
            }
        }
        return usage.ToString();
    }

    // Sets what a value-taking option or -f says; returns OMB's message when the value is refused.
    private string? Apply(char option, string? value)
    {
        switch (option)
        {
            case 'f': Full = true; return null;
            case 'm': return SetMessageSizes(value!) ? null : "Invalid Message Size";
            case 'i':
                if (!TryParseCount(value, 1, out int iterations)) return "Invalid Number of Iterations";
                (Iterations, IterationsLarge) = (iterations, iterations);
                return null;
            case 'x':
                if (!TryParseCount(value, 0, out int skip)) return "Invalid Number of Warmup Iterations";
                (Skip, SkipLarge) = (skip, skip);
                return null;
            case 'W':
                if (!TryParseCount(value, 1, out int window)) return "Invalid Window Size";
                WindowSize = window;
                return null;
            case 'R':
                if (value is not ("0" or "1")) return "Invalid Print Rate";
                PrintRate = value == "1";
                return null;
            case 'M':
                if (!long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out long limit)) return "Invalid Memory Limit";
                if (limit < LowestMemoryLimit)
                {
                    // As OMB does: a limit below 1 MB is raised to it, with a warning.
                    Console.Error.WriteLine($"Requested memory limit too low, using [{LowestMemoryLimit}] instead.");
                    limit = LowestMemoryLimit;
                }
                MemoryLimit = limit;
                return null;
            default: throw new InvalidOperationException($"Option -{option} has no setter.");
        }
    }

    // OMB's set_message_size: "MAX", "MIN:MAX", "MIN:" or ":MAX"; MIN must be at least 1. Sizes stay within what a
    // byte[] holds and what doubling can reach without overflow.
    private bool SetMessageSizes(string value)
    {
        const int Largest = 1 << 30;
        string[] parts = value.Split(':');
        if (parts.Length > 2) return false;
        int min = MinSize, max = MaxSize;
        if (parts.Length == 1)
        {
            if (!TryParseCount(parts[0], 0, out max)) return false;
        }
        else
        {
            if (parts[0].Length == 0 && parts[1].Length == 0) return false;
            if (parts[0].Length > 0 && !TryParseCount(parts[0], 1, out min)) return false;
            if (parts[1].Length > 0 && !TryParseCount(parts[1], 0, out max)) return false;
        }
        if (min > Largest || max > Largest) return false;
        (MinSize, MaxSize) = (min, max);
        return true;
    }

    private static bool TryParseCount(string? value, int least, out int count) =>
        int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out count) && count >= least;

    private sealed record OptionSpec(char Short, string Long, string? Value, string[] Help, params BenchmarkKind[] Kinds)
    {
        public bool AppliesTo(BenchmarkKind kind) => Kinds.Length == 0 || Kinds.Contains(kind);
    }
}
