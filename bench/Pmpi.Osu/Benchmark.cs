using Pmpi.Osu.Collectives;
using Pmpi.Osu.PointToPoint;

namespace Pmpi.Osu;

/// <summary>What a benchmark measures, which sets OMB's defaults and options for it (osu_util.c, process_options).</summary>
internal enum BenchmarkKind
{
    /// <summary>osu_latency: a ping-pong between ranks 0 and 1; sizes from 0 bytes, 10,000 iterations (1,000 above 8 KB).</summary>
    Latency,

    /// <summary>osu_bw and osu_bibw: windows of nonblocking sends between ranks 0 and 1; 100 iterations (20 above 8 KB).</summary>
    Bandwidth,

    /// <summary>osu_mbw_mr: windows of nonblocking sends between pairs of ranks; 100 iterations at every size.</summary>
    MultiPair,

    /// <summary>osu_allreduce, osu_bcast, osu_alltoall: a collective's latency over every rank; up to 1 MB, 1,000 iterations (100 above 8 KB).</summary>
    Collective,
}

/// <summary>One OMB benchmark as this program runs it: its subcommand, OMB's program name and title, and its body.</summary>
/// <param name="Command">The subcommand: OMB's program name without <c>osu_</c>.</param>
/// <param name="OmbName">OMB's program name, which the usage line names.</param>
/// <param name="Title">OMB's title, the first line of its output after <c># </c>.</param>
/// <param name="Kind">Which defaults and options apply.</param>
/// <param name="Run">The body every rank runs once the options are read and the world's size checked.</param>
internal sealed record Benchmark(string Command, string OmbName, string Title, BenchmarkKind Kind, Action<Intracommunicator, OsuOptions, OsuReport> Run)
{
    /// <summary>The OMB release whose programs these are ported from, named in every header line.</summary>
    public const string OmbVersion = "7.4";

    /// <summary>Every benchmark, in the order the usage lists them.</summary>
    public static readonly IReadOnlyList<Benchmark> All =
    [
        new("latency", "osu_latency", "OSU MPI Latency Test", BenchmarkKind.Latency, Latency.Run),
        new("bw", "osu_bw", "OSU MPI Bandwidth Test", BenchmarkKind.Bandwidth, Bandwidth.RunUnidirectional),
        new("bibw", "osu_bibw", "OSU MPI Bi-Directional Bandwidth Test", BenchmarkKind.Bandwidth, Bandwidth.RunBidirectional),
        new("mbw_mr", "osu_mbw_mr", "OSU MPI Multiple Bandwidth / Message Rate Test", BenchmarkKind.MultiPair, MultiPairBandwidth.Run),
        new("allreduce", "osu_allreduce", "OSU MPI Allreduce Latency Test", BenchmarkKind.Collective, CollectiveLatency.RunAllreduce),
        new("bcast", "osu_bcast", "OSU MPI Broadcast Latency Test", BenchmarkKind.Collective, CollectiveLatency.RunBroadcast),
        new("alltoall", "osu_alltoall", "OSU MPI All-to-All Personalized Exchange Latency Test", BenchmarkKind.Collective, CollectiveLatency.RunAlltoall),
    ];

    /// <summary>The first line OMB prints, naming this port instead of OMB's version (<c># OSU MPI Latency Test v7.4</c> there).</summary>
    public string Header => $"# {Title} (PMPI port of OMB {OmbVersion})";

    /// <summary>The benchmark whose subcommand (or OMB program name) is <paramref name="command"/>, or null.</summary>
    public static Benchmark? Find(string command) =>
        All.FirstOrDefault(b => b.Command == command || b.OmbName == command);

    /// <summary>
    /// Why a world of <paramref name="size"/> ranks cannot run this benchmark, in OMB's words, or null when it can:
    /// osu_latency, osu_bw and osu_bibw take exactly two, the others at least two.
    /// </summary>
    public string? RefusalFor(int size) => Kind switch
    {
        BenchmarkKind.Latency or BenchmarkKind.Bandwidth => size == 2 ? null : "This test requires exactly two processes",
        _ => size >= 2 ? null : "This test requires at least two processes",
    };
}
