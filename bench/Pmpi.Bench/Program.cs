// PMPI benchmarks. bench/run.sh runs `pingpong` beside Open MPI's pingpong.c and writes docs/benchmarks.md.
//   pingpong [--device inprocess|grpc] [--details] [--jit-warmup]   pingpong.c's table: half round trip and MB/s per size
//                                                   (grpc: in rank processes, `pmpi run -n 2 Pmpi.Bench.dll pingpong --device grpc`)
//   linkedarray [--device inprocess|grpc] [--iterations N]   Motor's LinkedArray ping-pong (objects); beside bench/linkedarray.py
//   baseline                                                   the floor: thread hand-off and memcpy, without PMPI
//   experiments [--repeats N]                                  where the in-process half round trip goes
//   matching [BenchmarkDotNet arguments]                       the matching engine alone (BenchmarkDotNet)
using System.CommandLine;
using BenchmarkDotNet.Running;
using Pmpi.Bench.Baselines;
using Pmpi.Bench.Experiments;
using Pmpi.Bench.Launchers;
using Pmpi.Bench.Matching;
using Pmpi.Bench.Objects;
using Pmpi.Bench.PingPong;

var device = new Option<BenchDevice>("--device")
{
    Description = "The PMPI device the ranks talk through: inprocess (threads of this process) or grpc (rank processes launched by `pmpi run -n 2`).",
    DefaultValueFactory = _ => BenchDevice.InProcess,
};
var details = new Option<bool>("--details") { Description = "Also report allocations and gen-0 collections per size, as # lines." };
var jitWarmup = new Option<bool>("--jit-warmup")
{
    Description = "Run the whole sweep once untimed first, so the timed sweep measures tiered-up (tier-1, PGO) code, not the JIT's warm-up.",
};
var timeout = new Option<int>("--timeout") { Description = "Abort the job after this many seconds.", DefaultValueFactory = _ => 600 };

var pingpong = new Command("pingpong", "Half round-trip latency (us) and bandwidth (MB/s) per message size, as shared/refbench/pingpong.c.")
{
    device, details, jitWarmup, timeout,
};
pingpong.SetAction(parse =>
{
    var launcher = JobLaunchers.For(parse.GetValue(device));
    bool withDetails = parse.GetValue(details), warmup = parse.GetValue(jitWarmup);
    try
    {
        launcher.Run(2, world =>
        {
            if (world.Rank == 0)
                Console.Out.WriteLine($"# PMPI {launcher.Name}, 2 ranks{(warmup ? ", after an untimed sweep" : "")}: size\thalf_rtt_us\tMB/s");
            if (warmup) PingPongBenchmark.Run(world, TextWriter.Null, details: false);
            PingPongBenchmark.Run(world, Console.Out, withDetails);
        }, TimeSpan.FromSeconds(parse.GetValue(timeout)));
    }
    catch (InvalidOperationException e)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }
    return 0;
});

var iterations = new Option<int>("--iterations") { Description = "Timed round trips per list.", DefaultValueFactory = _ => 500 };
var linkedArray = new Command("linkedarray", "Motor's LinkedArray ping-pong: a linked list of 256 and of 4096 nodes holding 4096 ints, as one object message.")
{
    device, iterations, timeout,
};
linkedArray.SetAction(parse =>
{
    var launcher = JobLaunchers.For(parse.GetValue(device));
    try
    {
        launcher.Run(2, world =>
        {
            if (world.Rank == 0) Console.Out.WriteLine($"# PMPI {launcher.Name}, 2 ranks, LinkedArray: nodes\thalf_rtt_us");
            LinkedArrayBenchmark.Run(world, Console.Out, parse.GetValue(iterations));
        }, TimeSpan.FromSeconds(parse.GetValue(timeout)));
    }
    catch (InvalidOperationException e)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }
    return 0;
});

var baseline = new Command("baseline", "Thread hand-off and memory-copy speed without PMPI: the floor under the in-process device.");
baseline.SetAction(_ => BaselineBenchmark.Run(Console.Out));

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

var root = new RootCommand("PMPI benchmarks beside native MPI (see bench/run.sh and docs/benchmarks.md).") { pingpong, linkedArray, baseline, experiments, matching };
return root.Parse(args).Invoke();
