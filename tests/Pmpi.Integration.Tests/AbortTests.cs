using System.Diagnostics;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>A rank that fails mid-run ends the whole job quickly, with its code, and leaves no rank process behind.</summary>
public sealed class AbortTests
{
    /// <summary>The requirement: a failing rank aborts the job within 5 s.</summary>
    private static readonly TimeSpan AbortRequirement = TimeSpan.FromSeconds(5);

    /// <summary>
    /// What a loaded 2-core machine may add to the test's measurement, which also includes the failing rank's output
    /// travelling through the agent and the master to `pmpi run`.
    /// </summary>
    private static readonly TimeSpan LoadAllowance = TimeSpan.FromSeconds(3);

    [Theory]
    [InlineData(new[] { "exit", "3", "42" }, 3, 42, false)]    // exits with 42 while the others wait for it
    [InlineData(new[] { "throw", "2" }, 2, 1, false)]          // throws out of Environment.Run: exit code 1
    [InlineData(new[] { "exit", "3", "42" }, 3, 42, true)]     // the same across two agent processes: ranks 0-1 on
    [InlineData(new[] { "throw", "2" }, 2, 1, true)]           // the master's node, 2-3 on the other
    public async Task Run_RankFailsMidRun_JobAbortsWithItsCodeAndNoRankSurvives(string[] scenario, int failingRank, int expectedCode, bool twoAgents)
    {
        // Arrange
        await using var nodeA = twoAgents ? await AgentProcess.StartAsync("node-a", slots: 2) : null;
        await using var nodeB = twoAgents ? await AgentProcess.StartAsync("node-b", slots: 2) : null;
        using var scratch = new ScratchDirectory();
        string[] arguments = nodeA is null || nodeB is null
            ? ["run", "--oversubscribe", "-n", "4", PmpiCli.TestRanksDll, .. scenario]
            : ["run", "--master", nodeA.Endpoint, scratch.Write("abort.xml", Computation.Of("abort", 4, scenario, ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)))];
        await using var run = PmpiCli.Start(arguments);

        // Act
        var job = await EndOfFailingJobAsync(run, failingRank);

        // Assert
        Assert.True(job.Code == expectedCode, $"pmpi run exited with {job.Code}, expected {expectedCode}.\n{run.Transcript}");
        Assert.Equal(4, job.Ranks);
        Assert.True(run.Stderr.Any(line => line.Contains($"rank {failingRank} failed (exit code {expectedCode})", StringComparison.Ordinal)),
            $"pmpi run did not report rank {failingRank} as the failing rank.\n{run.Transcript}");
        Assert.True(job.AfterFailure < AbortRequirement + LoadAllowance,
            $"The job took {job.AfterFailure.TotalSeconds:F2} s to end after rank {failingRank} failed; the requirement is {AbortRequirement.TotalSeconds} s (plus {LoadAllowance.TotalSeconds} s allowed for a loaded machine).\n{run.Transcript}");
        Assert.True(job.Survivors.Count == 0, $"Rank processes {string.Join(", ", job.Survivors)} outlived `pmpi run`.\n{run.Transcript}");
    }

    [Fact]
    public async Task Run_RankCallsAbort_JobEndsWithItsCodeAndOneLineNamingTheCall()
    {
        // Arrange: rank 1 calls Abort(5) while the others wait for a message.
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "abort", "1", "5"]);

        // Act
        var job = await EndOfFailingJobAsync(run, failingRank: 1);

        // Assert: the abort's code, one line from the rank as MPI_Abort prints, no stack trace, and the job's reason.
        Assert.True(job.Code == 5, $"pmpi run exited with {job.Code}, expected 5.\n{run.Transcript}");
        Assert.True(run.Stderr.Contains("[1] Rank 1 called Abort(5)."), $"Rank 1 did not say that it called Abort(5).\n{run.Transcript}");
        Assert.False(run.Stderr.Any(line => line.StartsWith("[1]    at ", StringComparison.Ordinal)), $"Rank 1 printed a stack trace for its Abort.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed (exit code 5): Rank 1 called Abort(5).", StringComparison.Ordinal)),
            $"pmpi run did not name rank 1's Abort as the job's end.\n{run.Transcript}");
        Assert.Empty(job.Survivors);
    }

    [Fact]
    public async Task Run_RankExitsWithCode0WithoutFinalizing_JobFailsAtOnceNamingIt()
    {
        // Arrange: rank 1 ends its process with code 0 mid-run while the others wait for a message from anyone.
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "exit", "1", "0"]);

        // Act
        var job = await EndOfFailingJobAsync(run, failingRank: 1);

        // Assert: a rank that joined and left without MPI_Finalize fails the job, as a non-zero exit would.
        Assert.True(job.Code == 1, $"pmpi run exited with {job.Code}, expected 1.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("rank 1 failed (exit code 1): its process exited with code 0", StringComparison.Ordinal)
            && line.Contains("without finalizing PMPI", StringComparison.Ordinal)), $"pmpi run did not say that rank 1 left without finalizing.\n{run.Transcript}");
        Assert.True(job.AfterFailure < AbortRequirement + LoadAllowance, $"The job took {job.AfterFailure.TotalSeconds:F2} s to end after rank 1 exited.\n{run.Transcript}");
        Assert.Empty(job.Survivors);
    }

    /// <summary>How a job whose rank fails ended: pmpi run's exit code, how long after the rank's last line, how many ranks said hello, and which rank processes outlived it.</summary>
    private sealed record FailedJob(int Code, TimeSpan AfterFailure, int Ranks, List<int> Survivors);

    /// <summary>Waits for <paramref name="failingRank"/>'s "failing now", then for `pmpi run` to end; kills every rank process it started whatever happens.</summary>
    private static async Task<FailedJob> EndOfFailingJobAsync(ChildProcess run, int failingRank)
    {
        try
        {
            await run.WaitForLineAsync(line => line == $"[{failingRank}] failing now", PmpiCli.Timeout, $"rank {failingRank}'s last line");
            var sinceFailure = Stopwatch.StartNew();
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            sinceFailure.Stop();
            var hellos = RankHello.All(run.Stdout);
            return new(code, sinceFailure.Elapsed, hellos.Count, RankProcesses.Survivors(hellos[0].JobId, hellos.Select(h => h.ProcessId)));
        }
        finally
        {
            var hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
