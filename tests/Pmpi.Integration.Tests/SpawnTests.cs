using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// MPI_Comm_spawn under `pmpi run`: ranks start a world of new rank processes through the master and their agent, and
/// talk to it through the intercommunicator (the children's Parent), point-to-point, collectively and merged.
/// </summary>
public sealed class SpawnTests
{
    [Theory]
    [InlineData(3, 2, "shared")]   // odd sizes: the non-power-of-two paths of the collectives
    [InlineData(7, 3, "network")]
    public Task Spawn_ParentsStartChildren_BothSidesTalkThroughTheIntercommunicatorAndAllEndCleanly(int parents, int children, string links) =>
        // The last parent is the root; children run Pmpi.TestRanks, found beside the root's program.
        RunAsync(["run", "--oversubscribe", "--links", links, "-n", $"{parents}", PmpiCli.TestRanksDll, "spawn", $"{children}"],
            (run, code, hellos) => AssertSpawnedAsync(run, code, hellos, parents, children));

    [Fact]
    public async Task Spawn_ParentsOnTwoAgents_ChildrenStartOnTheRootsNodeAndTalkToParentsOnBoth()
    {
        // Arrange: ranks 0-1 on node a, 2-3 on node b; the root (3) spawns on b, whose agent has room for them.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 4);
        using var scratch = new ScratchDirectory();
        var computation = scratch.Write("spawn.xml", Computation.Of("spawn", 4, ["spawn", "2"], ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)));

        // Act, Assert: the children ran under node b's agent, and talked to the parents of node a over the network.
        await RunAsync(["run", "--master", nodeA.Endpoint, computation], async (run, code, hellos) =>
        {
            await AssertSpawnedAsync(run, code, hellos, parents: 4, children: 2);
            Assert.Equal(["node-a", "node-a", "node-b", "node-b", "node-b", "node-b"], hellos.OrderBy(hello => hello.Tag).Select(hello => hello.Agent));
        });
    }

    [Fact]
    public Task Spawn_SpawnedWorldSpawnsAgain_ThreeGenerationsTalkAndFinalizeTogether() =>
        // 3 parents spawn 2 children (job ranks 3-4), which spawn 1 grandchild (job rank 5) from their root, rank 4.
        RunAsync(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "spawn", "2", "Pmpi.TestRanks.dll", "spawned", "again"], async (run, code, hellos) =>
        {
            // The children talked to both their parents and their child; the grandchild's parents are the children.
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Contains("[3] spawned rank=0 size=2 parents=3 token=1003 sum=1 merged=3/5 sum=10 same=True disposed=null", run.Stdout);
            Assert.Contains("[3] spawn rank=0 children=1 got=[0] merged=0/3 sum=3 parent=none", run.Stdout);
            Assert.Contains("[4] spawn rank=1 children=1 got=[] merged=1/3 sum=3 parent=none", run.Stdout);
            Assert.Contains("[5] spawned rank=0 size=1 parents=2 token=1002 sum=0 merged=2/3 sum=3 same=True disposed=null", run.Stdout);
            Assert.Contains(run.Stderr, line => line.Contains($"Job {hellos[0].JobId}: 6 ranks finished", StringComparison.Ordinal));
            await AssertNoneSurvivesAsync(hellos);
        });

    [Theory]
    [InlineData("NoSuch.dll", "Spawn's program 'NoSuch.dll' was not found (looked for ", " and {beside}/NoSuch.dll).")]
    [InlineData("/bin/sh", "Rank 2 could not spawn 2 ranks of /bin/sh: Rank 2 asked to spawn /bin/sh, which is not in the directory of a program job ", "): a job spawns only programs beside its own.")]
    public Task Spawn_ProgramMissingOrOutsideTheComputations_EveryParentGetsTheRootsErrorAndNothingStarts(string program, string starts, string ends) =>
        // A missing program fails at the root; one the computation does not run beside is refused by the master.
        RunAsync(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "spawn", "2", program], (run, code, hellos) =>
        {
            // The job goes on (the error is the program's to handle); nothing was started.
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            ends = ends.Replace("{beside}", Path.GetDirectoryName(PmpiCli.TestRanksDll), StringComparison.Ordinal);
            for (int rank = 0; rank < 3; rank++)
                Assert.Contains(run.Stdout, line => line.StartsWith($"[{rank}] spawn failed: {starts}", StringComparison.Ordinal) && line.EndsWith(ends, StringComparison.Ordinal));
            Assert.Contains(run.Stderr, line => line.Contains($"Job {hellos[0].JobId}: 3 ranks finished", StringComparison.Ordinal));
            return Task.CompletedTask;
        });

    [Fact]
    public Task Spawn_ASpawnedRankFails_TheJobEndsWithItsCodeNamingItsJobRankAndNoRankSurvives() =>
        // Three parents spawn two children, and child 1 (job rank 4) throws while all others wait.
        RunAsync(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "spawn", "2", "Pmpi.TestRanks.dll", "throw", "1"], async (run, code, hellos) =>
        {
            Assert.True(code == 1, $"pmpi run exited with {code}, not the failing child's 1.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains("rank 4 failed (exit code 1)", StringComparison.Ordinal)), $"The summary does not name job rank 4.\n{run.Transcript}");
            Assert.Equal(5, hellos.Count);
            await AssertNoneSurvivesAsync(hellos);
        });

    /// <summary>Runs `pmpi` with <paramref name="arguments"/> and checks the run; kills whatever rank is left, even when a check fails.</summary>
    private static async Task RunAsync(string[] arguments, Func<ChildProcess, int, List<RankHello>, Task> check)
    {
        await using var run = PmpiCli.Start(arguments);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);
        var hellos = RankHello.All(run.Stdout);
        try
        {
            await check(run, code, hellos);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(hello => hello.ProcessId));
        }
    }

    /// <summary>Every parent and child printed what the intercommunicator carried, in a merged world of all of them, and no rank outlived the job.</summary>
    internal static async Task AssertSpawnedAsync(ChildProcess run, int code, List<RankHello> hellos, int parents, int children)
    {
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        int all = parents + children;
        long sum = all * (all - 1L) / 2;
        for (int parent = 0; parent < parents; parent++)
        {
            var got = Enumerable.Range(0, children).Where(child => child % parents == parent).Select(child => child * child);
            Assert.Contains($"[{parent}] spawn rank={parent} children={children} got=[{string.Join(',', got)}] merged={parent}/{all} sum={sum} parent=none", run.Stdout);
        }
        for (int child = 0; child < children; child++)
        {
            Assert.Contains($"[{parents + child}] spawned rank={child} size={children} parents={parents} token={1000 + parents} sum={children * (children - 1) / 2} " +
                $"merged={parents + child}/{all} sum={sum} same=True disposed=null", run.Stdout);
        }
        Assert.Contains(run.Stderr, line => line.Contains($"Job {hellos[0].JobId}: {all} ranks finished", StringComparison.Ordinal));
        Assert.Equal(all, hellos.Select(hello => hello.ProcessId).Distinct().Count());
        await AssertNoneSurvivesAsync(hellos);
    }

    private static async Task AssertNoneSurvivesAsync(List<RankHello> hellos) =>
        Assert.Empty(await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(hello => hello.ProcessId), TimeSpan.FromSeconds(10)));
}
