using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The shell's job control: Ctrl-Z (SIGTSTP) suspends a job of the embedded agent, ranks and all, for longer than any
/// heartbeat timeout, and SIGCONT (`fg`, `bg`) lets it finish; a job run through a master is not suspended, and `pmpi
/// run` says so.
/// </summary>
public sealed class JobControlTests
{
    /// <summary>Longer than the heartbeat timeout (5 s), after which silent ranks or agents would end the job.</summary>
    private static readonly TimeSpan Suspension = TimeSpan.FromSeconds(8);

    [LinuxFact]
    public async Task Run_SigtstpThenSigcont_TheJobStopsWholeAndFinishesAfterTheHeartbeatTimeout()
    {
        // Arrange: two ranks that registered and wait for a file.
        using var scratch = new ScratchDirectory();
        var trigger = Path.Combine(scratch.Path, "go");
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "await", trigger]);
        var hellos = await WaitingRanksAsync(run);
        try
        {
            // Act: Ctrl-Z, and the ranks' file while they are stopped.
            await Signals.SendAsync("TSTP", run.Id);
            await StoppedAsync(run.Id, "pmpi run", run);
            foreach (var hello in hellos) await StoppedAsync(hello.ProcessId, $"rank {hello.Rank}", run);
            await File.WriteAllTextAsync(trigger, "");
            await Task.Delay(Suspension);

            // Assert: still stopped, none of it ended.
            Assert.True(IsStopped(run.Id), $"pmpi run went on before SIGCONT.\n{run.Transcript}");
            Assert.All(hellos, hello => Assert.True(IsStopped(hello.ProcessId), $"Rank {hello.Rank} went on before SIGCONT.\n{run.Transcript}"));

            // Act: fg.
            await Signals.SendAsync("CONT", run.Id);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(code == 0, $"pmpi run exited with {code} after its job was suspended for {Suspension} and continued.\n{run.Transcript}");
            Assert.Contains("[0] allreduce=3 gather=1,2", run.Stdout);
            Assert.Contains(run.Stderr, line => line.Contains("job suspended", StringComparison.Ordinal));
        }
        finally
        {
            RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_SigtstpWithAMaster_GoesOnAndSaysTheJobCannotBeSuspended()
    {
        // Arrange
        await using var agent = await AgentProcess.StartAsync("node-a", slots: 2);
        using var scratch = new ScratchDirectory();
        var trigger = Path.Combine(scratch.Path, "go");
        await using var run = PmpiCli.Start(["run", "--master", agent.Endpoint, "-n", "2", PmpiCli.TestRanksDll, "await", trigger]);
        var hellos = await WaitingRanksAsync(run);
        try
        {
            // Act
            await Signals.SendAsync("TSTP", run.Id);
            await run.WaitForLineAsync(line => line.Contains("cannot be suspended", StringComparison.Ordinal), PmpiCli.Timeout, "why Ctrl-Z did not suspend");
            await File.WriteAllTextAsync(trigger, "");
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(code == 0, $"pmpi run exited with {code} after SIGTSTP.\n{run.Transcript}");
            Assert.Contains("[0] allreduce=3 gather=1,2", run.Stdout);
        }
        finally
        {
            RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    private static async Task<List<RankHello>> WaitingRanksAsync(ChildProcess run)
    {
        for (int rank = 0; rank < 2; rank++)
            await run.WaitForLineAsync(line => line == $"[{rank}] waiting", PmpiCli.Timeout, $"rank {rank} waiting");
        return RankHello.All(run.Stdout);
    }

    /// <summary>Waits until process <paramref name="processId"/> is stopped by a signal.</summary>
    private static async Task StoppedAsync(int processId, string what, ChildProcess run)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (!IsStopped(processId))
        {
            Assert.True(DateTime.UtcNow < deadline, $"{what} (process {processId}) did not stop within 10 s of SIGTSTP.\n{run.Transcript}");
            await Task.Delay(50);
        }
    }

    private static bool IsStopped(int processId) => RankProcesses.StateOf(processId) == 'T';
}
