using System.Diagnostics;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// One computation of rank processes in three languages, each written in its own idiom (tests/Pmpi.MixedRanks.*):
/// rank 0 in C# through the classic MPI_* names, ranks 1-2 in Visual Basic, ranks 3-4 in F#. They run the same
/// collectives (sums, maxima, a user's operation, a reduce, a broadcast from the C# rank; 1 element to 4 MB; scalars)
/// and each checks every result against the serial one. On two agents the F# rank 3 leads the second node.
/// </summary>
public sealed class MixedLanguageTests
{
    private static readonly TimeSpan JobTimeout = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task Run_CSharpVisualBasicAndFSharpRanksOnOneNode_EveryCollectiveMatchesTheSerialResult()
    {
        await using var node = await AgentProcess.StartAsync("node", slots: 5);

        await AssertEveryRankPassesAsync(("node", node.Endpoint, 5));
    }

    [Fact]
    public async Task Run_CSharpVisualBasicAndFSharpRanksOnTwoAgents_EveryCollectiveMatchesTheSerialResult()
    {
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 3);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);

        await AssertEveryRankPassesAsync(("a", nodeA.Endpoint, 3), ("b", nodeB.Endpoint, 2));
    }

    [Fact]
    public async Task Run_FSharpAndVisualBasicPassASubtractionWhereCSharpPassesMpiSum_FailsFastNamingBoth()
    {
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 3);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("mismatch.xml", Job("mismatch", [("a", nodeA.Endpoint, 3), ("b", nodeB.Endpoint, 2)]));

        var clock = Stopwatch.StartNew();
        await using var run = PmpiCli.Start(["run", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        Assert.True(code is not (0 or 124), $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("Ranks disagree in a collective", run.Transcript);
        Assert.Contains("of the predefined Add", run.Transcript);
        Assert.Contains("of a user-defined operation", run.Transcript);
        Assert.True(clock.Elapsed < JobTimeout / 2, $"The job took {clock.Elapsed} to fail.\n{run.Transcript}");
    }

    private static async Task AssertEveryRankPassesAsync(params (string Name, string Agent, int Slots)[] nodes)
    {
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("mixed.xml", Job("suite", nodes));

        await using var run = PmpiCli.Start(["run", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        string[] passed = ["[0] C# rank 0: ", "[1] Visual Basic rank 1: ", "[2] Visual Basic rank 2: ", "[3] F# rank 3: ", "[4] F# rank 4: "];
        foreach (var line in passed) Assert.Contains(run.Stdout, output => output.StartsWith(line, StringComparison.Ordinal) && output.EndsWith(" checks passed", StringComparison.Ordinal));
    }

    private static string Job(string scenario, (string Name, string Agent, int Slots)[] nodes) =>
        Computation.Of("mixed-languages", JobTimeout, nodes,
            Computation.Ranks(Program("Pmpi.MixedRanks.CSharp"), 1, node: null, scenario),
            Computation.Ranks(Program("Pmpi.MixedRanks.VisualBasic"), 2, node: null, scenario),
            Computation.Ranks(Program("Pmpi.MixedRanks.FSharp"), 2, node: null, scenario));

    private static string Program(string name) => Path.Combine(AppContext.BaseDirectory, name + ".dll");
}
