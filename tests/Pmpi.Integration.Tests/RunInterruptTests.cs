using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Signals and hard kills around a running job: `pmpi run` stopped by SIGTERM aborts its job, a rank stopped by
/// SIGTERM ends and aborts it, and ranks whose agent vanished end themselves. No rank outlives the submission.
/// </summary>
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
        await using var job = await BlockingJob.StartAsync();

        // Act
        await Signals.TerminateAsync(job.Hellos.Single(h => h.Rank == 1).ProcessId);
        int code = await job.Run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == SigtermExitCode, $"pmpi run exited with {code} after its rank 1 got SIGTERM, expected that rank's {SigtermExitCode}.\n{job.Run.Transcript}");
        Assert.Contains(job.Run.Stderr, line => line.Contains("rank 1", StringComparison.Ordinal));
        Assert.Empty(await job.SurvivorsAfterAsync(TimeSpan.Zero));
    }

    [LinuxFact]
    public async Task Run_KilledOutright_ItsRanksEndThemselves()
    {
        // Arrange: the embedded agent dies with `pmpi run`, so nothing is left to kill the ranks but the ranks.
        await using var job = await BlockingJob.StartAsync();

        // Act
        using (var submitter = System.Diagnostics.Process.GetProcessById(job.Run.Id)) submitter.Kill(entireProcessTree: false);
        var survivors = await job.SurvivorsAfterAsync(AbortRequirement);

        // Assert
        Assert.True(survivors.Count == 0, $"Ranks {string.Join(", ", survivors)} outlived their agent by {AbortRequirement}.\n{job.Run.Transcript}");
    }

    private static async Task SigtermAbortsJob(bool submitToAgent)
    {
        // Arrange
        await using var agent = submitToAgent ? await AgentProcess.StartAsync("node-a", slots: 2) : null;
        await using var job = await BlockingJob.StartAsync(agent is null ? [] : ["--master", agent.Endpoint]);

        // Act
        await Signals.TerminateAsync(job.Run.Id);
        int code = await job.Run.WaitForExitAsync(PmpiCli.Timeout);
        // With the embedded agent the ranks are gone when `pmpi run` exits; a remote master needs a moment to
        // notice the submitter left.
        var survivors = await job.SurvivorsAfterAsync(submitToAgent ? AbortRequirement : TimeSpan.Zero);

        // Assert
        Assert.True(code == SigtermExitCode, $"pmpi run exited with {code} after SIGTERM, expected {SigtermExitCode}.\n{job.Run.Transcript}");
        Assert.Contains(job.Run.Stderr, line => line.Contains("interrupted by SIGTERM", StringComparison.Ordinal));
        Assert.True(survivors.Count == 0, $"Ranks {string.Join(", ", survivors)} outlived the interrupted `pmpi run`.\n{job.Run.Transcript}");
        if (agent is not null) Assert.Empty(await RunningJobsAfterAsync(agent, AbortRequirement));
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

    /// <summary>
    /// `pmpi run [master] -n 2 Pmpi.TestRanks block`, started and waited for until both ranks block; disposing it
    /// kills whatever is left of it, ranks and submitter, by id.
    /// </summary>
    private sealed class BlockingJob : IAsyncDisposable
    {
        private BlockingJob(ChildProcess run, List<RankHello> hellos)
        {
            Run = run;
            Hellos = hellos;
        }

        /// <summary>The `pmpi run` process.</summary>
        public ChildProcess Run { get; }

        /// <summary>What each rank said when it started: its rank, process id and job.</summary>
        public List<RankHello> Hellos { get; }

        public static async Task<BlockingJob> StartAsync(string[]? master = null)
        {
            var run = PmpiCli.Start(["run", .. master ?? [], "-n", "2", PmpiCli.TestRanksDll, "block"]);
            try
            {
                for (int rank = 0; rank < 2; rank++)
                    await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
                return new BlockingJob(run, RankHello.All(run.Stdout));
            }
            catch
            {
                await KillAsync(run);
                throw;
            }
        }

        /// <summary>The ranks still running once they have had <paramref name="grace"/> to end.</summary>
        public Task<List<int>> SurvivorsAfterAsync(TimeSpan grace) =>
            RankProcesses.SurvivorsAfterAsync(Hellos[0].JobId, Hellos.Select(h => h.ProcessId), grace);

        public ValueTask DisposeAsync() => KillAsync(Run);

        private static async ValueTask KillAsync(ChildProcess run)
        {
            var hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
            await run.DisposeAsync();
        }
    }
}
