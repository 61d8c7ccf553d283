using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run`'s standard input goes to rank 0, as mpirun's does; every other rank reads an empty input.</summary>
public sealed class StandardInputTests
{
    [LinuxFact]
    public async Task Run_InputWrittenWhileRanksRun_RankZeroReadsItToItsEndAndTheOthersNothing()
    {
        // Arrange: cat echoes its input until the input ends, so the job ends only once pmpi run's input does.
        await using var run = PmpiCli.Start(["run", "-n", "2", "/bin/cat"], keepInputOpen: true);
        await run.WaitForLineAsync(line => line.EndsWith("2 ranks launched", StringComparison.Ordinal), PmpiCli.Timeout, "the launch");

        // Act
        await run.WriteInputAsync("first line\n");
        await run.WaitForLineAsync(line => line == "[0] first line", PmpiCli.Timeout, "rank 0 echoing its input");
        await run.WriteInputAsync("second line\n");
        run.CloseInput();
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(["[0] first line", "[0] second line"], run.Stdout);
    }
}
