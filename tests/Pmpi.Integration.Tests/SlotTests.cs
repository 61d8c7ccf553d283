using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Slots bound what a job may start: `-n` beyond the local slots is refused before anything launches, and an agent
/// refuses a launch beyond its own --slots whatever the computation file claims, unless oversubscription is asked
/// (and then up to 8 ranks per slot).
/// </summary>
public sealed class SlotTests
{
    private const int InvalidComputationExitCode = 2;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Run_RanksBeyondLocalSlots_ExitsWith2AndLaunchesNothing(bool oversubscribe)
    {
        // Arrange: one more rank than the embedded agent takes (8 per slot when oversubscribing).
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "launched.txt");
        int ranks = System.Environment.ProcessorCount * (oversubscribe ? 8 : 1) + 1;
        string[] flags = oversubscribe ? ["--oversubscribe"] : [];

        // Act
        await using var run = PmpiCli.Start(["run", .. flags, "-n", $"{ranks}", PmpiCli.TestRanksDll, "marker", marker]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == InvalidComputationExitCode, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains($"-n {ranks} exceeds", StringComparison.Ordinal)), $"No error naming -n {ranks}.\n{run.Transcript}");
        Assert.True(oversubscribe || run.Stderr.Any(line => line.Contains("--oversubscribe", StringComparison.Ordinal)), $"The error does not point to --oversubscribe.\n{run.Transcript}");
        Assert.False(File.Exists(marker), "A rank was launched beyond the slots.");
    }

    [Fact]
    public async Task Run_FileClaimsMoreSlotsThanTheAgentHas_AgentRefusesTheLaunch()
    {
        // Arrange: the file says 2 slots, the agent was started with 1.
        await using var agent = await AgentProcess.StartAsync("one-slot", slots: 1);
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "launched.txt");
        var file = scratch.Write("lying.xml", Computation.Of("lying", 2, ["marker", marker], ("a", agent.Endpoint, 2)));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agent.Endpoint, file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 1, $"pmpi run exited with {code}, expected 1.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("only 1 of its 1 slots are free", StringComparison.Ordinal)), $"The agent's refusal is not reported.\n{run.Transcript}");
        Assert.False(File.Exists(marker), "The agent launched a rank beyond its slots.");
    }

    [Fact]
    public async Task Run_OversubscribedWithinTheCap_AgentRunsTheJob()
    {
        // Arrange: 3 ranks on an agent of 1 slot, allowed by oversubscribe="true" (up to 8).
        await using var agent = await AgentProcess.StartAsync("crowded", slots: 1);
        using var scratch = new ScratchDirectory();
        var text = Computation.Of("crowded", 3, ["collectives"], ("a", agent.Endpoint, 1)).Replace("<computation ", "<computation oversubscribe=\"true\" ", StringComparison.Ordinal);
        var file = scratch.Write("crowded.xml", text);

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agent.Endpoint, file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] allreduce=6 gather=1,2,3", run.Stdout);
    }
}
