using System.Diagnostics;

namespace Pmpi.Windows.Tests;

/// <summary>
/// `pmpi run` of the Windows build on its embedded agent, under Wine: rank processes on one node talk through shared
/// memory (mappings and event handles) or, when asked, through network links; ranks spawn more; a failing, killed or
/// frozen rank ends the job fast, naming it; and the job objects end every process a job started when `pmpi` itself
/// is killed.
/// </summary>
[Collection(WindowsBuild.Collection)]
public sealed class WindowsRunTests(WindowsBuild windows)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan AbortRequirement = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan LoadAllowance = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan FrozenLimit = TimeSpan.FromSeconds(15);

    [WineFact]
    public Task Run_EightRanksOverSharedMemory_RingSsendBigMessageAndCollectivesPass() => RunDomainsScenario("shared", "shared memory", ranks: 8);

    [WineFact]
    public Task Run_FourRanksOverNetworkLinks_RingSsendBigMessageAndCollectivesPass() => RunDomainsScenario("network", "direct", ranks: 4);

    [WineFact]
    public async Task Run_EightRanksWaiting_EveryRanksOutputArrivesWhileTheyRun()
    {
        // Arrange: eight ranks print a line, then wait for a file before they end.
        const int ranks = 8;
        var proceed = Path.Combine(windows.Root, "proceed");
        await using var run = windows.Start("run", "--oversubscribe", "-n", $"{ranks}", windows.TestRanks, "await", WindowsBuild.WindowsPath(proceed));

        // Act: the ranks print their lines together, after a barrier; all must arrive at once, while the ranks run.
        // An agent whose output readers each held a thread of its pool (pipes are synchronous handles on Windows)
        // forwarded them one by one as its pool grew: 7 s for eight ranks on an idle machine, over 20 s on a busy one.
        await run.WaitForLineAsync(line => line.EndsWith("] waiting", StringComparison.Ordinal), Timeout, "a rank's line");
        var sinceFirst = Stopwatch.StartNew();
        for (int rank = 0; rank < ranks; rank++)
            await run.WaitForLineAsync(line => line == $"[{rank}] waiting", Timeout, $"rank {rank}'s line");
        sinceFirst.Stop();
        await File.WriteAllTextAsync(proceed, "");
        int code = await run.WaitForExitAsync(Timeout);

        // Assert
        Assert.True(sinceFirst.Elapsed < AbortRequirement, $"The ranks' lines took {sinceFirst.Elapsed.TotalSeconds:F1} s to arrive after the first.\n{run.Transcript}");
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] allreduce=36 gather=1,2,3,4,5,6,7,8", run.Stdout);
    }

    [WineFact]
    public async Task Run_TwoRanksSpawnThree_ParentsAndChildrenTalkInAMergedWorld()
    {
        // Act: the children's program is found beside the parents' (MPI_Comm_spawn).
        await using var run = windows.Start("run", "--oversubscribe", "-n", "2", windows.TestRanks, "spawn", "3", "Pmpi.TestRanks.exe", "spawned");
        int code = await run.WaitForExitAsync(Timeout);

        // Assert: each parent got the children's messages meant for it, and all five share a merged world.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] spawn rank=0 children=3 got=[0,4] merged=0/5 sum=10 parent=none", run.Stdout);
        Assert.Contains("[1] spawn rank=1 children=3 got=[1] merged=1/5 sum=10 parent=none", run.Stdout);
        for (int child = 0; child < 3; child++)
            Assert.Contains($"[{2 + child}] spawned rank={child} size=3 parents=2 token=1002 sum=3 merged={2 + child}/5 sum=10 same=True disposed=null", run.Stdout);
    }

    [WineFact]
    public async Task Run_RankThrows_JobEndsWithItsCodeNamingItAndNoRankSurvives()
    {
        // Act
        await using var run = windows.Start("run", "--oversubscribe", "-n", "4", windows.TestRanks, "throw", "2");
        await run.WaitForLineAsync(line => line == "[2] failing now", Timeout, "rank 2's last line");
        var sinceFailure = Stopwatch.StartNew();
        int code = await run.WaitForExitAsync(Timeout);
        sinceFailure.Stop();

        // Assert
        Assert.True(code == 1, $"pmpi run exited with {code}, expected 1.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("rank 2 failed (exit code 1)", StringComparison.Ordinal)), $"pmpi run did not report rank 2 as the failing rank.\n{run.Transcript}");
        Assert.True(sinceFailure.Elapsed < AbortRequirement + LoadAllowance, $"The job took {sinceFailure.Elapsed.TotalSeconds:F1} s to end after rank 2 failed.\n{run.Transcript}");
        Assert.Empty(windows.RankProcesses("throw"));
    }

    [WineFact]
    public async Task Run_RankKilledMidMessage_JobEndsWithin5sNamingIt()
    {
        // Arrange: rank 0 streams 16 MB messages to rank 1 through their shared memory.
        await using var run = await StartTwoRanks("stream", "sender", "receiver");
        await run.WaitForLineAsync(line => line == "[1] streaming", Timeout, "rank 1 receiving");
        var receiver = Assert.Single(windows.RankProcesses("stream receiver"));

        // Act: SIGKILL of the Linux process that is rank 1. Wine reports such an end as exit code 0, as if the rank
        // had returned: the job still fails, because the rank did not finalize PMPI.
        Process.GetProcessById(receiver).Kill();
        var clock = Stopwatch.StartNew();
        int code = await run.WaitForExitAsync(AbortRequirement + LoadAllowance + LoadAllowance);
        clock.Stop();

        // Assert
        Assert.True(code != 0, $"pmpi run exited with 0 although rank 1 was killed.\n{run.Transcript}");
        Assert.True(clock.Elapsed < AbortRequirement + LoadAllowance, $"pmpi run took {clock.Elapsed.TotalSeconds:F1} s to end after rank 1 was killed.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed", StringComparison.Ordinal)), $"pmpi run did not report rank 1 as the failing rank.\n{run.Transcript}");
        Assert.Empty(windows.RankProcesses("stream"));
    }

    [WineFact]
    public async Task Run_RankFrozen_JobEndsWithin15sNamingIt()
    {
        // Arrange: two ranks wait in a receive.
        await using var run = await StartTwoRanks("block", "running", "frozen");
        for (int rank = 0; rank < 2; rank++)
            await run.WaitForLineAsync(line => line == $"[{rank}] blocking", Timeout, $"rank {rank} waiting");
        var frozen = Assert.Single(windows.RankProcesses("block frozen"));

        // Act: SIGSTOP freezes every thread of rank 1, its runtime's heartbeat on the Windows pipe among them.
        await Signals.SendAsync("STOP", frozen);
        var clock = Stopwatch.StartNew();
        int code = await run.WaitForExitAsync(FrozenLimit + LoadAllowance);
        clock.Stop();

        // Assert: the heartbeat timeout (5 s) named it, and the agent's job object ended the stopped process.
        Assert.True(code != 0, $"pmpi run exited with 0 although rank 1 was frozen.\n{run.Transcript}");
        Assert.True(clock.Elapsed < FrozenLimit, $"pmpi run took {clock.Elapsed.TotalSeconds:F1} s to end after rank 1 froze.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed", StringComparison.Ordinal) && line.Contains("no heartbeat", StringComparison.Ordinal)),
            $"pmpi run did not report rank 1 as frozen.\n{run.Transcript}");
        Assert.Empty(windows.RankProcesses("block"));
    }

    [WineFact]
    public async Task Run_PmpiKilled_ItsRanksAndAProcessARankStartedEnd()
    {
        // Arrange: the rank starts a process of its own (this program again, lingering for minutes).
        await using var run = windows.Start("run", "-n", "1", windows.TestRanks, "grandchild", "unused");
        await run.WaitForLineAsync(line => line.StartsWith("[0] grandchild pid=", StringComparison.Ordinal), Timeout, "the grandchild's pid");
        Assert.Single(windows.RankProcesses("grandchild"));
        Assert.Single(windows.RankProcesses("linger"));

        // Act: pmpi (the embedded agent) dies; the job objects it held close.
        await Signals.TerminateAsync(run.Id);
        await run.WaitForExitAsync(Timeout);
        var clock = Stopwatch.StartNew();
        while ((windows.RankProcesses("grandchild").Count > 0 || windows.RankProcesses("linger").Count > 0) && clock.Elapsed < TimeSpan.FromSeconds(10))
            await Task.Delay(100);

        // Assert
        Assert.Empty(windows.RankProcesses("grandchild"));
        Assert.Empty(windows.RankProcesses("linger"));
    }

    /// <summary>
    /// Starts `pmpi run` of two ranks of <paramref name="scenario"/>, whose extra argument (<paramref name="first"/>,
    /// <paramref name="second"/>, ignored by the scenario) tells their processes apart (<see cref="WindowsBuild.RankProcesses"/>).
    /// </summary>
    private async Task<ChildProcess> StartTwoRanks(string scenario, string first, string second)
    {
        var file = Path.Combine(windows.Root, $"{scenario}.xml");
        await File.WriteAllTextAsync(file, $"""
            <computation name="{scenario}" xmlns="urn:pmpi:computation:v1">
              <ranks program="{windows.TestRanks}" args="{scenario} {first}"/>
              <ranks program="{windows.TestRanks}" args="{scenario} {second}"/>
            </computation>
            """);
        return windows.Start("run", WindowsBuild.WindowsPath(file));
    }

    /// <summary>Ranks on one node: a ring, Ssend both ways, a 4 MB message and collectives, over the given links.</summary>
    private async Task RunDomainsScenario(string links, string route, int ranks)
    {
        // Act
        await using var routes = windows.Start("run", "--show-routes", "--links", links, "--oversubscribe", "-n", $"{ranks}", windows.TestRanks, "domains");
        int routesCode = await routes.WaitForExitAsync(Timeout);
        await using var run = windows.Start("run", "--links", links, "--oversubscribe", "-n", $"{ranks}", windows.TestRanks, "domains");
        int code = await run.WaitForExitAsync(Timeout);

        // Assert: every pair of distinct ranks on the route asked for, and the scenario's checks passed.
        Assert.True(routesCode == 0, routes.Transcript);
        var pairs = routes.Stdout.Where(line => line.Contains(" -> ", StringComparison.Ordinal) && !line.EndsWith(": self", StringComparison.Ordinal)).ToList();
        Assert.Equal(ranks * (ranks - 1), pairs.Count);
        Assert.All(pairs, line => Assert.EndsWith($": {route}", line, StringComparison.Ordinal));
        Assert.True(code == 0, $"pmpi run --links {links} exited with {code}.\n{run.Transcript}");
        var all = Enumerable.Range(1, ranks).ToList();
        Assert.Contains($"[0] ring={ranks} ssend=ok big=ok allreduce={all.Sum()} gather={string.Join(',', all)}", run.Stdout);
    }
}
