using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run` stopped by SIGTERM aborts its job: no rank outlives the submission.</summary>
public sealed class RunInterruptTests
{
    /// <summary>The shell convention for a process ended by SIGTERM: 128 + 15.</summary>
    private const int SigtermExitCode = 143;

    /// <summary>A failing rank must abort the job within 5 s; losing the submitter is held to the same bound.</summary>
    private static readonly TimeSpan AbortRequirement = TimeSpan.FromSeconds(5);

    [LinuxFact]
    public Task Run_SigtermWithEmbeddedAgent_Exits143AndKillsItsRanks() => SigtermAbortsJob(submitToAgent: false);

    [LinuxFact]
    public Task Run_SigtermWhileSubmittedToAgent_Exits143AndTheAgentKillsTheRanks() => SigtermAbortsJob(submitToAgent: true);

    [LinuxFact]
    public async Task Rank_Sigterm_EndsTheRankAndAbortsTheJob()
    {
        // Arrange: a rank hosts its own gRPC endpoint; that server must not swallow the process's signals.
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "block"]);
        List<RankHello> hellos = [];
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Act
            await Signals.TerminateAsync(hellos.Single(h => h.Rank == 1).ProcessId);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(code == SigtermExitCode, $"pmpi run exited with {code} after its rank 1 got SIGTERM, expected that rank's {SigtermExitCode}.\n{run.Transcript}");
            Assert.Contains(run.Stderr, line => line.Contains("rank 1", StringComparison.Ordinal));
            Assert.Empty(await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), TimeSpan.Zero));
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_KilledOutright_ItsRanksEndThemselves()
    {
        // Arrange: the embedded agent dies with `pmpi run`, so nothing is left to kill the ranks but the ranks.
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "block"]);
        List<RankHello> hellos = [];
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Act
            using (var submitter = System.Diagnostics.Process.GetProcessById(run.Id)) submitter.Kill(entireProcessTree: false);
            var survivors = await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), AbortRequirement);

            // Assert
            Assert.True(survivors.Count == 0, $"Ranks {string.Join(", ", survivors)} outlived their agent by {AbortRequirement}.\n{run.Transcript}");
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    /// <summary>The jobs the agent still runs once they have had <paramref name="grace"/> to end.</summary>
    private static async Task<List<string>> RunningJobsAfterAsync(AgentProcess agent, TimeSpan grace)
    {
        var deadline = DateTime.UtcNow + grace;
        while (true)
        {
            var jobs = (await PmpiCli.GetNodeInfoAsync(agent.Address)).RunningJobs.ToList();
            if (jobs.Count == 0 || DateTime.UtcNow >= deadline) return jobs;
            await Task.Delay(100);
        }
    }

    private static async Task SigtermAbortsJob(bool submitToAgent)
    {
        // Arrange
        await using var agent = submitToAgent ? await AgentProcess.StartAsync("node-a", slots: 2) : null;
        string[] master = agent is null ? [] : ["--master", agent.Endpoint];
        await using var run = PmpiCli.Start(["run", .. master, "-n", "2", PmpiCli.TestRanksDll, "block"]);
        List<RankHello> hellos = [];
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Act
            await Signals.TerminateAsync(run.Id);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            // With the embedded agent the ranks are gone when `pmpi run` exits; a remote master needs a moment to
            // notice the submitter left.
            var survivors = await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), submitToAgent ? AbortRequirement : TimeSpan.Zero);

            // Assert
            Assert.True(code == SigtermExitCode, $"pmpi run exited with {code} after SIGTERM, expected {SigtermExitCode}.\n{run.Transcript}");
            Assert.Contains(run.Stderr, line => line.Contains("interrupted by SIGTERM", StringComparison.Ordinal));
            Assert.True(survivors.Count == 0, $"Ranks {string.Join(", ", survivors)} outlived the interrupted `pmpi run`.\n{run.Transcript}");
            if (agent is not null) Assert.Empty(await RunningJobsAfterAsync(agent, AbortRequirement));
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
