using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>A computation's own timeout aborts it: exit code 124 and no rank left.</summary>
public sealed class TimeoutTests
{
    /// <summary>The documented exit code of a job whose computation timeout passed (as timeout(1)).</summary>
    private const int TimeoutExitCode = 124;

    [Fact]
    public async Task Run_ComputationTimeoutPasses_Exits124AndKillsTheRanks()
    {
        // Arrange: ranks that wait forever, under a 3 s limit.
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("timeout.xml", Computation.Of("timeout", TimeSpan.FromSeconds(3), 2, ["block"]));
        await using var run = PmpiCli.Start(["run", file]);
        List<RankHello> hellos = [];
        try
        {
            // Act
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            hellos = RankHello.All(run.Stdout);

            // Assert
            Assert.True(code == TimeoutExitCode, $"pmpi run exited with {code}, expected {TimeoutExitCode}.\n{run.Transcript}");
            Assert.Equal(2, hellos.Count);
            Assert.Contains(run.Stderr, line => line.Contains("timeout of 00:00:03 passed", StringComparison.Ordinal));
            Assert.Empty(RankProcesses.Survivors(hellos[0].JobId, hellos.Select(h => h.ProcessId)));
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
