using System.Diagnostics;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>An agent stopped by SIGTERM (systemd's stop, `kill`), or by the end of its input when told to, kills its ranks and exits cleanly.</summary>
public sealed class AgentShutdownTests
{
    /// <summary>How long a stopping agent may take: it kills its ranks and lets its calls end, then exits.</summary>
    private static readonly TimeSpan ShutdownBound = TimeSpan.FromSeconds(10);

    [LinuxFact]
    public async Task Agent_SigtermWhileRunningRanks_ExitsZeroKillsItsRanksAndTheJobAborts()
    {
        // Arrange: node-a is also the master; node-b's two ranks are the ones whose agent stops.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("block.xml", Computation.Of("block", 4, ["block"], ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)));
        await using var run = PmpiCli.Start(["run", "--master", nodeA.Endpoint, file]);
        List<RankHello> hellos = [];
        try
        {
            for (int rank = 0; rank < 4; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);
            var onB = hellos.Where(h => h.Agent == "node-b").Select(h => h.ProcessId).ToList();
            Assert.Equal(2, onB.Count);

            // Act
            var clock = Stopwatch.StartNew();
            await Signals.TerminateAsync(nodeB.Process.Id);
            int agentCode = await nodeB.Process.WaitForExitAsync(PmpiCli.Timeout);
            var stopped = clock.Elapsed;
            // node-a's ranks may still be running here: the job's abort is on its way to them.
            var survivorsOnB = RankProcesses.Survivors(hellos[0].JobId, onB).Intersect(onB).ToList();
            int runCode = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(agentCode == 0, $"The agent exited with {agentCode} after SIGTERM.\n{nodeB.Process.Transcript}");
            Assert.True(stopped < ShutdownBound, $"The agent took {stopped.TotalSeconds:F1} s to stop (bound {ShutdownBound.TotalSeconds} s).\n{nodeB.Process.Transcript}");
            Assert.True(survivorsOnB.Count == 0, $"Ranks {string.Join(", ", survivorsOnB)} outlived their agent.\n{nodeB.Process.Transcript}");
            // Losing an agent aborts the job with exit code 1 (JobRun's rule), naming the agent rather than a rank.
            Assert.True(runCode == 1, $"pmpi run exited with {runCode}, expected 1 for a lost agent.\n{run.Transcript}");
            Assert.True(run.Stderr.Any(line => line.Contains(nodeB.Endpoint, StringComparison.Ordinal) && line.Contains("aborted", StringComparison.Ordinal)),
                $"pmpi run did not name the stopped agent {nodeB.Endpoint}.\n{run.Transcript}");
            var survivors = await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), TimeSpan.Zero);
            Assert.True(survivors.Count == 0, $"Ranks {string.Join(", ", survivors)} outlived the aborted job.\n{run.Transcript}");
            Assert.Equal(2, (await PmpiCli.GetNodeInfoAsync(nodeA.Address)).Slots); // the other agent still serves
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Agent_StopAtInputEnd_InputClosed_ExitsZeroAfterSayingWhereRanksBind()
    {
        // Arrange: --rank-address as a host name, resolved where the agent runs.
        await using var agent = PmpiCli.Start(["agent", "--port", "0", "--slots", "1", "--rank-address", "localhost", "--stop-at-input-end"], keepInputOpen: true);
        await agent.WaitForLineAsync(line => line.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "the listening line");

        // Act
        var clock = Stopwatch.StartNew();
        agent.CloseInput();
        int code = await agent.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"The agent exited with {code} when its input ended.\n{agent.Transcript}");
        Assert.True(clock.Elapsed < ShutdownBound, $"The agent took {clock.Elapsed.TotalSeconds:F1} s to stop.\n{agent.Transcript}");
        Assert.Contains(agent.Stderr, line => line.Contains("ranks bind 127.0.0.1", StringComparison.Ordinal));
    }
}
