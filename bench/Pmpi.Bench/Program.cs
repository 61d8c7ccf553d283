// PMPI benchmarks. bench/run.sh runs `pingpong`, `collectives` and `hello` beside their native mirrors in bench/native
// and writes docs/benchmarks.md.
//   pingpong [--device inprocess|grpc] [--counters] [--jit-warmup] [--quick] [--sizes N...]   half round trip and MB/s per size
//                                                   (grpc: in rank processes, `pmpi run -n 2 Pmpi.Bench.dll pingpong --device grpc`)
//   collectives [--device ...] [--ranks N] [--jit-warmup] [--quick] [--block-allreduce-from BYTES]
//                                                   Allreduce and Broadcast latency per size
//   overlap [--device ...] [--ranks N] [--jit-warmup] [--quick] [--sizes N...]
//                                                   how much of ImmediateAllreduce hides behind computation
//   faces --face fsharp|vb [--into] [--device ...] [--ranks N] [--jit-warmup] [--quick] [--sizes N...]
//                                                   Allreduce latency through the F# or Visual Basic face
//   hello [--device ...] [--ranks N]                           each rank's resident memory after init, for launch timing
//   linkedarray [--device inprocess|grpc] [--iterations N]   Motor's LinkedArray ping-pong (objects); beside bench/linkedarray.py
//   baseline                                                   the floor: thread hand-off and memcpy, without PMPI
//   tlsfloor tcp|tls [--quick]                                 .NET's TLS (SslStream) beside plain sockets, without PMPI
//   experiments [--repeats N]                                  where the in-process half round trip goes
//   matching [BenchmarkDotNet arguments]                       the matching engine alone (BenchmarkDotNet)
using System.CommandLine;
using Pmpi;
using Pmpi.Collectives;
using BenchmarkDotNet.Running;
using Pmpi.Bench;
using Pmpi.Bench.Baselines;
using Pmpi.Bench.Collectives;
using Pmpi.Bench.Experiments;
using Pmpi.Bench.Launch;
using Pmpi.Bench.Launchers;
using Pmpi.Bench.Matching;
using Pmpi.Bench.Objects;
using Pmpi.Bench.Overlap;
using Pmpi.Bench.PingPong;

var device = new Option<BenchDevice>("--device")
{
    Description = "The PMPI device the ranks talk through: inprocess (threads of this process) or grpc (rank processes launched by `pmpi run -n 2`).",
    DefaultValueFactory = _ => BenchDevice.InProcess,
};
var counters = new Option<bool>("--counters") { Description = "Also report, from both ranks, context switches, bytes allocated and gen-0 collections per round trip, as # lines (bench/counters.sh)." };
var jitWarmup = new Option<bool>("--jit-warmup")
{
    Description = "Repeat the sweep untimed first (the ping-pong's quick one) until the JIT has settled on every rank, so the timed sweep measures steady-state (tier-1, PGO) code, not the JIT's warm-up.",
};
var timeout = new Option<int>("--timeout") { Description = "Abort the job after this many seconds.", DefaultValueFactory = _ => 600 };
var quick = new Option<bool>("--quick") { Description = "A tenth of the iterations, as the native mirror's --quick." };
var ranks = new Option<int>("--ranks") { Description = "Ranks in the job (with --device grpc: the job's size, `pmpi run -n`).", DefaultValueFactory = _ => 4 };

var pingpongSizes = new Option<int[]>("--sizes")
{
    Description = "Message sizes in bytes, instead of the sweep's (as the native mirror's --sizes; bench/run.sh pairs runs size by size).",
    AllowMultipleArgumentsPerToken = true,
    DefaultValueFactory = _ => PingPongBenchmark.Sizes,
};
pingpongSizes.Validators.Add(result =>
{
    if ((result.GetValueOrDefault<int[]>() ?? []).FirstOrDefault(n => n < 1, 1) is var bad and < 1)
        result.AddError($"--sizes takes sizes of 1 byte and more; {bad} is not one.");
});
var pingpong = new Command("pingpong", "Half round-trip latency (us) and bandwidth (MB/s) per message size, as bench/native/pingpong.c.")
{
    device, counters, jitWarmup, quick, timeout, pingpongSizes,
};
pingpong.SetAction(parse =>
{
    bool withCounters = parse.GetValue(counters), warmup = parse.GetValue(jitWarmup), isQuick = parse.GetValue(quick);
    int[] sweep = parse.GetValue(pingpongSizes)!;
    return RunJob(parse, 2, (world, launcher) =>
    {
        int sweeps = warmup ? JitWarmup.Run(() => PingPongBenchmark.Run(world, TextWriter.Null, sweep, counters: false, quick: true), MostOverRanks(world)) : 0;
        if (world.Rank == 0) Console.Out.WriteLine($"# PMPI {launcher}, 2 ranks{AfterSweeps(sweeps)}: size\thalf_rtt_us\tMB/s");
        PingPongBenchmark.Run(world, Console.Out, sweep, withCounters, isQuick);
    });
});

var blockAllreduceFrom = new Option<int?>("--block-allreduce-from")
{
    Description = "Allreduce arrays of at least this many bytes by blocks (reduce-scatter + allgather), to measure where that pays.",
};
var blockBroadcastFrom = new Option<int?>("--block-broadcast-from")
{
    Description = "Broadcast arrays of at least this many bytes between nodes by blocks (scatter + ring), to measure where that pays (bench/nodes.sh).",
};
var sizes = new Option<int[]>("--sizes")
{
    Description = "Message sizes in bytes, instead of the native mirror's.",
    AllowMultipleArgumentsPerToken = true,
    DefaultValueFactory = _ => CollectivesBenchmark.Sizes,
};
var collectives = new Command("collectives", "Allreduce and Broadcast latency (us) per message size, as bench/native/collectives.c.")
{
    device, ranks, jitWarmup, quick, timeout, blockAllreduceFrom, blockBroadcastFrom, sizes,
};
collectives.SetAction(parse =>
{
    bool warmup = parse.GetValue(jitWarmup), isQuick = parse.GetValue(quick);
    // Every rank's communicators choose by these as they are made, so the ranks start with them.
    var thresholds = CollectiveOptions.Default;
    if (parse.GetValue(blockAllreduceFrom) is { } from) thresholds = thresholds with { BlockAllreduceFrom = from };
    if (parse.GetValue(blockBroadcastFrom) is { } broadcastFrom) thresholds = thresholds with { BlockBroadcastFrom = broadcastFrom };
    int[] sweep = parse.GetValue(sizes)!;
    return RunJobWith(parse, parse.GetValue(ranks), thresholds, (world, _) =>
    {
        int sweeps = warmup ? JitWarmup.Run(() => CollectivesBenchmark.Run(world, TextWriter.Null, sweep, isQuick), MostOverRanks(world)) : 0;
        if (world.Rank == 0) Console.Out.WriteLine($"# PMPI, {world.Size} ranks{AfterSweeps(sweeps)}: operation\tsize\tus");
        CollectivesBenchmark.Run(world, Console.Out, sweep, isQuick);
    });
});

var overlapSizes = new Option<int[]>("--sizes")
{
    Description = "Message sizes in bytes, instead of the native mirror's.",
    AllowMultipleArgumentsPerToken = true,
    DefaultValueFactory = _ => OverlapBenchmark.Sizes,
};
var overlap = new Command("overlap", "How much of ImmediateAllreduce hides behind computation, per message size, as bench/native/overlap.c.")
{
    device, ranks, jitWarmup, quick, timeout, overlapSizes,
};
overlap.SetAction(parse =>
{
    bool warmup = parse.GetValue(jitWarmup), isQuick = parse.GetValue(quick);
    int[] sweep = parse.GetValue(overlapSizes)!;
    return RunJob(parse, parse.GetValue(ranks), (world, _) =>
    {
        int sweeps = warmup ? JitWarmup.Run(() => OverlapBenchmark.Run(world, TextWriter.Null, sweep, quick: true), MostOverRanks(world)) : 0;
        if (world.Rank == 0) Console.Out.WriteLine($"# PMPI, {world.Size} ranks{AfterSweeps(sweeps)}: iallreduce\tsize\tallreduce_us\tpure_us\tcompute_us\ttotal_us\toverlap_pct");
        OverlapBenchmark.Run(world, Console.Out, sweep, isQuick);
    });
});

var face = new Option<string>("--face") { Description = "The face whose allreduce is timed: fsharp (Mpi.allreduceArray (+)) or vb (Allreduce(values, ReduceOperation.Sum)).", Required = true };
face.AcceptOnlyFromAmong("fsharp", "vb");
var into = new Option<bool>("--into") { Description = "Reduce into one array of the caller's (Mpi.allreduceInto; Allreduce(values, ReduceOperation.Sum, result)) instead of a new array each call." };
var faces = new Command("faces", "Allreduce latency (us) per message size through the F# or Visual Basic face, as the allreduce lines of `collectives`.")
{
    face, into, device, ranks, jitWarmup, quick, timeout, sizes,
};
faces.SetAction(parse =>
{
    bool warmup = parse.GetValue(jitWarmup), isQuick = parse.GetValue(quick);
    int[] sweep = parse.GetValue(sizes)!;
    bool intoCallers = parse.GetValue(into);
    Func<Intracommunicator, int, int, double> secondsPerCall = parse.GetValue(face) == "fsharp"
        ? (world, size, iterations) => Pmpi.Bench.FSharp.Allreduce.secondsPerCall(intoCallers, world, size, iterations)
        : (world, size, iterations) => Pmpi.Bench.VisualBasic.Allreduce.SecondsPerCall(intoCallers, world, size, iterations);
    return RunJob(parse, parse.GetValue(ranks), (world, _) =>
    {
        void Sweep(TextWriter output, bool quickSweep)
        {
            foreach (int n in sweep)
            {
                double slowest = world.Allreduce(secondsPerCall(world, n, CollectivesBenchmark.IterationsFor(n, quickSweep)), Operation<double>.Max);
                if (world.Rank == 0) output.WriteLine(string.Create(System.Globalization.CultureInfo.InvariantCulture, $"allreduce\t{n}\t{slowest * 1e6:F2}"));
            }
            output.Flush();
        }
        int sweeps = warmup ? JitWarmup.Run(() => Sweep(TextWriter.Null, quickSweep: true), MostOverRanks(world)) : 0;
        if (world.Rank == 0) Console.Out.WriteLine($"# PMPI {parse.GetValue(face)} face{(intoCallers ? ", into the caller's array" : "")}, {world.Size} ranks{AfterSweeps(sweeps)}: operation\tsize\tus");
        Sweep(Console.Out, isQuick);
    });
});

var hello = new Command("hello", "Each rank's resident memory after init and a barrier, as bench/native/hello.c (run.sh times the launch).")
{
    device, ranks, timeout,
};
hello.SetAction(parse => RunJob(parse, parse.GetValue(ranks), (world, _) => HelloBenchmark.Run(world, Console.Out)));

var iterations = new Option<int>("--iterations") { Description = "Timed round trips per list.", DefaultValueFactory = _ => 500 };
var linkedArray = new Command("linkedarray", "Motor's LinkedArray ping-pong: a linked list of 256 and of 4096 nodes holding 4096 ints, as one object message.")
{
    device, iterations, timeout,
};
linkedArray.SetAction(parse =>
{
    int count = parse.GetValue(iterations);
    return RunJob(parse, 2, (world, launcher) =>
    {
        if (world.Rank == 0) Console.Out.WriteLine($"# PMPI {launcher}, 2 ranks, LinkedArray: nodes\thalf_rtt_us");
        LinkedArrayBenchmark.Run(world, Console.Out, count);
    });
});

var baseline = new Command("baseline", "Thread hand-off and memory-copy speed without PMPI: the floor under the in-process device.");
baseline.SetAction(_ => BaselineBenchmark.Run(Console.Out));

var transport = new Argument<string>("transport") { Description = "tcp: plain sockets; tls: SslStream on each end." };
transport.AcceptOnlyFromAmong("tcp", "tls");
var tlsFloor = new Command("tlsfloor", "The ping-pong's sizes between two threads over TCP loopback, plain or through SslStream: what .NET's TLS costs here, without PMPI.")
{
    transport, quick,
};
tlsFloor.SetAction(parse => TlsFloorBenchmark.Run(Console.Out, parse.GetValue(transport) == "tls", parse.GetValue(quick)));

var repeats = new Option<int>("--repeats") { Description = "Runs per experiment; the best is kept.", DefaultValueFactory = _ => 5 };
var experiments = new Command("experiments", "Breaks the in-process half round trip down: one thread, engine alone, engine ping-pong by wait strategy.")
{
    repeats,
};
experiments.SetAction(parse => HotPathExperiments.Run(Console.Out, parse.GetValue(repeats)));

var matching = new Command("matching", "BenchmarkDotNet micro-benchmark of MatchingEngine post/deliver.") { TreatUnmatchedTokensAsErrors = false };
matching.SetAction(parse =>
{
    // BenchmarkDotNet finds Pmpi.Bench.csproj under the current directory (run from the repository root); its
    // reports go to a temporary folder rather than into the working tree, unless --artifacts says otherwise.
    string[] passOn = [.. parse.UnmatchedTokens];
    if (!passOn.Contains("--artifacts")) passOn = [.. passOn, "--artifacts", Path.Combine(Path.GetTempPath(), "pmpi-bench-artifacts")];
    BenchmarkRunner.Run<MatchingEngineBenchmarks>(args: passOn);
});

var root = new RootCommand("PMPI benchmarks beside native MPI (see bench/run.sh and docs/benchmarks.md).")
{
    pingpong, collectives, overlap, faces, hello, linkedArray, baseline, tlsFloor, experiments, matching,
};
return root.Parse(args).Invoke();

// Runs body on the chosen device's ranks; 2 when the launcher refuses (e.g. --device grpc outside `pmpi run`).
int RunJob(ParseResult parse, int size, Action<Intracommunicator, string> body) => RunJobWith(parse, size, CollectiveOptions.Default, body);

// The same, the ranks' collectives changing algorithm at the sizes of collectiveOptions.
int RunJobWith(ParseResult parse, int size, CollectiveOptions collectiveOptions, Action<Intracommunicator, string> body)
{
    var launcher = JobLaunchers.For(parse.GetValue(device));
    try
    {
        var options = new EnvironmentOptions { Timeout = TimeSpan.FromSeconds(parse.GetValue(timeout)), Collectives = collectiveOptions };
        launcher.Run(size, world => body(world, launcher.Name), options);
        return 0;
    }
    catch (InvalidOperationException e)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }
}

// The largest of the ranks' values: JitWarmup's agreement on whether any rank still compiles.
static Func<long, long> MostOverRanks(Intracommunicator world) => value => world.Allreduce(value, Operation<long>.Max);

static string AfterSweeps(int sweeps) => sweeps == 0 ? "" : $", after {sweeps} untimed sweeps";
