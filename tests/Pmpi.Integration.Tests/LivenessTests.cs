using System.Diagnostics;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A job never hangs on a rank or an agent that stopped answering: a frozen rank (SIGSTOP), a frozen agent, a rank
/// that exits before registering and ranks that never register all end the job with an error naming them.
/// </summary>
public sealed class LivenessTests
{
    /// <summary>The issue's bound for noticing a frozen rank or agent and ending `pmpi run` (10 s by default, plus load).</summary>
    private static readonly TimeSpan FrozenLimit = TimeSpan.FromSeconds(15);

    /// <summary>What a loaded 2-core machine may add to a bound, on top of the requirement.</summary>
    private static readonly TimeSpan LoadAllowance = TimeSpan.FromSeconds(3);

    [LinuxFact]
    public async Task Run_RankStoppedBySigstop_ExitsNonZeroWithin15sNamingTheRank()
    {
        // Arrange
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "block"]);
        var hellos = new List<RankHello>();
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);
            var frozen = hellos.Single(h => h.Rank == 1);

            // Act
            await Signals.SendAsync("STOP", frozen.ProcessId);
            var clock = Stopwatch.StartNew();
            int code = await run.WaitForExitAsync(FrozenLimit + LoadAllowance);
            clock.Stop();

            // Assert
            Assert.True(code != 0, $"pmpi run exited with 0 although rank 1 was frozen.\n{run.Transcript}");
            Assert.True(clock.Elapsed < FrozenLimit, $"pmpi run took {clock.Elapsed.TotalSeconds:F1} s to end after rank 1 froze.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed", StringComparison.Ordinal) && line.Contains("no heartbeat", StringComparison.Ordinal)),
                $"pmpi run did not name rank 1 as frozen.\n{run.Transcript}");
        }
        finally
        {
            // SIGKILL ends a stopped process too.
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_AgentStoppedBySigstop_ExitsNonZeroWithin15sNamingTheAgentAndTheAgentsRankEnds()
    {
        // Arrange: one rank on each of two agents; the first is also the master.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 1);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 1);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("frozen-agent.xml", Computation.Of("frozen", 2, ["block"], ("a", nodeA.Endpoint, 1), ("b", nodeB.Endpoint, 1)));
        await using var run = PmpiCli.Start(["run", "--master", nodeA.Endpoint, file]);
        var hellos = new List<RankHello>();
        bool stopped = false;
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Act
            await Signals.SendAsync("STOP", nodeB.Process.Id);
            stopped = true;
            var clock = Stopwatch.StartNew();
            int code = await run.WaitForExitAsync(FrozenLimit + LoadAllowance);
            var elapsed = clock.Elapsed;
            // The frozen agent can kill nothing: its rank must notice that its heartbeats go unread, and end itself.
            var survivors = await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, [hellos.Single(h => h.Rank == 1).ProcessId], FrozenLimit + LoadAllowance - clock.Elapsed);
            clock.Stop();

            // Assert
            Assert.True(code != 0, $"pmpi run exited with 0 although an agent was frozen.\n{run.Transcript}");
            Assert.True(elapsed < FrozenLimit, $"pmpi run took {elapsed.TotalSeconds:F1} s to end after the agent froze.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains($"the agent of node 'b' at {nodeB.Endpoint} sent no heartbeat", StringComparison.Ordinal)),
                $"pmpi run did not name the frozen agent {nodeB.Endpoint}.\n{run.Transcript}");
            Assert.True(survivors.Count == 0, $"Rank 1 (process {string.Join(", ", survivors)}) still runs {clock.Elapsed.TotalSeconds:F1} s after its agent froze.\n{run.Transcript}");
        }
        finally
        {
            if (stopped) await Signals.SendAsync("CONT", nodeB.Process.Id);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_MasterStoppedBySigstop_AgentKillsItsRanksAndRunExitsNamingTheMasterWithin15s()
    {
        // Arrange: node A is only the master; both ranks run on node B.
        await using var master = await AgentProcess.StartAsync("master", slots: 1);
        await using var node = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("frozen-master.xml", Computation.Of("frozen", 2, ["block"], ("b", node.Endpoint, 2)));
        await using var run = PmpiCli.Start(["run", "--master", master.Endpoint, file]);
        var hellos = new List<RankHello>();
        bool stopped = false;
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Act
            await Signals.SendAsync("STOP", master.Process.Id);
            stopped = true;
            var clock = Stopwatch.StartNew();
            int code = await run.WaitForExitAsync(FrozenLimit + LoadAllowance);
            var survivors = await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), FrozenLimit + LoadAllowance - clock.Elapsed);
            clock.Stop();

            // Assert
            Assert.True(code != 0, $"pmpi run exited with 0 although its master was frozen.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains($"master https://{master.Endpoint}/", StringComparison.Ordinal)),
                $"pmpi run did not name the frozen master {master.Endpoint}.\n{run.Transcript}");
            Assert.Empty(survivors);
            Assert.True(clock.Elapsed < FrozenLimit, $"The ranks ended {clock.Elapsed.TotalSeconds:F1} s after the master froze.\n{node.Process.Transcript}");
            // The console logger writes from a queue of its own: the line may trail the kills it announced.
            await node.Process.WaitForLineAsync(line => line.Contains($"master https://{master.Endpoint}", StringComparison.Ordinal) && line.Contains("stopped answering", StringComparison.Ordinal),
                LoadAllowance, "the agent's log of its lost master");
        }
        finally
        {
            if (stopped) await Signals.SendAsync("CONT", master.Process.Id);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_RankExitsZeroBeforeRegistering_FailsWithin5sNamingTheRank()
    {
        // Arrange
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "early", "1"]);
        var hellos = new List<RankHello>();
        try
        {
            await run.WaitForLineAsync(line => line.EndsWith("2 ranks launched", StringComparison.Ordinal), PmpiCli.Timeout, "the launch");
            var clock = Stopwatch.StartNew();

            // Act
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            clock.Stop();
            hellos = RankHello.All(run.Stdout);

            // Assert: measured from the launch, which includes rank 1's own start-up.
            Assert.True(code == 1, $"pmpi run exited with {code}, expected 1.\n{run.Transcript}");
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5) + LoadAllowance, $"pmpi run took {clock.Elapsed.TotalSeconds:F1} s to end after the launch.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed", StringComparison.Ordinal) && line.Contains("before registering", StringComparison.Ordinal)),
                $"pmpi run did not name rank 1 as exiting before registering.\n{run.Transcript}");
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_RankNeverRegistersWithinRegisterTimeout_FailsNamingTheRank()
    {
        // Arrange: rank 1 would register only after 120 s; the job waits 3 s.
        await using var run = PmpiCli.Start(["run", "--register-timeout", "3", "-n", "2", PmpiCli.TestRanksDll, "late", "1", "120"]);
        var hellos = new List<RankHello>();
        try
        {
            // Act
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            hellos = RankHello.All(run.Stdout);

            // Assert
            Assert.True(code == 1, $"pmpi run exited with {code}, expected 1.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains("rank 1 did not register with the master within 3 s", StringComparison.Ordinal)),
                $"pmpi run did not name rank 1 as unregistered.\n{run.Transcript}");
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_ComputePhaseLongerThanHeartbeatTimeout_Succeeds()
    {
        // Arrange: 6 s without a single PMPI call, against a 2 s heartbeat timeout.
        await using var run = PmpiCli.Start(["run", "--heartbeat-timeout", "2", "-n", "2", PmpiCli.TestRanksDll, "compute", "6"]);

        // Act
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}: the runtime's heartbeat did not carry a long compute phase.\n{run.Transcript}");
        Assert.Contains("[0] computed True", run.Stdout);
    }
}
