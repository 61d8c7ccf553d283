using System.Text.Json;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A rank's program is checked where it runs: by its node's agent, before that agent starts any rank of the job. The
/// master's machine need not have it, as on a campus whose nodes share no file system with the submitter.
/// </summary>
public sealed class NodeProgramTests
{
    /// <summary>What Pmpi.TestRanks.dll needs beside it to run: itself, and every assembly its deps.json names.</summary>
    public static IEnumerable<string> TestRanksFiles()
    {
        string[] own = ["Pmpi.TestRanks.dll", "Pmpi.TestRanks.runtimeconfig.json", "Pmpi.TestRanks.deps.json"];
        using var deps = JsonDocument.Parse(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Pmpi.TestRanks.deps.json")));
        var libraries = deps.RootElement.GetProperty("targets").EnumerateObject().First().Value.EnumerateObject();
        var assemblies = libraries.SelectMany(library => library.Value.TryGetProperty("runtime", out var runtime) ? runtime.EnumerateObject().Select(asset => Path.GetFileName(asset.Name)) : []);
        return [.. own.Union(assemblies)];
    }

    [MountNamespaceFact]
    public async Task Run_ProgramThatOnlyItsNodeHas_RunsThere()
    {
        // Arrange: node b's agent runs in a mount namespace of its own, in which a tmpfs over an empty directory holds
        // the test ranks; the master (`pmpi run`'s, on this machine's file system) sees the directory empty.
        using var scratch = new ScratchDirectory();
        var nodeOnly = Directory.CreateDirectory(Path.Combine(scratch.Path, "node-only")).FullName;
        var staging = Directory.CreateDirectory(Path.Combine(scratch.Path, "staging")).FullName;
        foreach (var name in TestRanksFiles()) File.Copy(Path.Combine(AppContext.BaseDirectory, name), Path.Combine(staging, name));
        string[] ownMounts = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            "mount -t tmpfs -o size=64m pmpi-node-only \"$1\" && cp -R \"$2\"/. \"$1\" && shift 2 && exec \"$@\"", "sh", nodeOnly, staging];
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2, launcher: ownMounts);
        var program = Path.Combine(nodeOnly, "Pmpi.TestRanks.dll");
        Assert.False(File.Exists(program), $"{program} is visible outside node b's mount namespace: the test would prove nothing.");
        var file = scratch.Write("node-only.xml", Computation.Of("node-programs", TimeSpan.FromMinutes(2), [("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)],
            Computation.Ranks(PmpiCli.TestRanksDll, 2, "a", "collectives"),
            Computation.Ranks(program, 2, "b", "collectives")));

        // Act
        await using var run = PmpiCli.Start(["run", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal(["node-a", "node-a", "node-b", "node-b"], hellos.OrderBy(h => h.Rank).Select(h => h.Agent));
            Assert.Contains("[0] allreduce=10 gather=1,2,3,4", run.Stdout);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_ProgramMissingOnItsNode_FailsNamingNodeRankAndPathAndStartsNothingThere()
    {
        // Arrange: node b gets rank 0 (a program it has, which would leave a marker file) and rank 1 (one it lacks).
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "started-on-b");
        var missing = Path.Combine(scratch.Path, "absent", "app.dll");
        var file = scratch.Write("missing.xml", Computation.Of("node-programs", TimeSpan.FromMinutes(2), [("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)],
            Computation.Ranks(PmpiCli.TestRanksDll, 1, "b", "marker", marker),
            Computation.Ranks(missing, 1, "b"),
            Computation.Ranks(PmpiCli.TestRanksDll, 1, "a", "collectives")));

        // Act
        await using var run = PmpiCli.Start(["run", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code != 0, $"pmpi run exited with 0 though rank 1's program is nowhere.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains($"the agent of node 'b' at {nodeB.Endpoint} failed: rank 1's program '{missing}' is not on this machine; no rank of job ", StringComparison.Ordinal)),
                $"pmpi run did not name the node, the rank and the missing program.\n{run.Transcript}");
            Assert.False(File.Exists(marker), $"Node b started rank 0 though it could not start rank 1.\n{run.Transcript}");
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
