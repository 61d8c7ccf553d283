using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run -n N program ...`: what follows the program is the program's, as with mpirun.</summary>
public sealed class ProgramArgumentsTests
{
    [Fact]
    public async Task Run_ProgramArgumentsSpelledLikePmpiOptions_ReachTheProgramUnparsed()
    {
        // Act: -n, --master and --insecure after the program are its own, not pmpi's.
        await using var run = PmpiCli.Start(["run", "-n", "1", PmpiCli.TestRanksDll, "args", "-n", "5", "--master", "nowhere:1", "--insecure"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] args: -n 5 --master nowhere:1 --insecure", run.Stdout);
    }

    [Fact]
    public async Task Run_ProgramArgumentsAfterDoubleDash_ReachTheProgramWithoutIt()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "1", PmpiCli.TestRanksDll, "--", "args", "--master", "x"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] args: --master x", run.Stdout);
    }
}
