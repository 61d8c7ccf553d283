using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The ranks' output tagged "[rank] " (the default, and `--tag-output`), or as the ranks wrote it (`--no-tag-output`),
/// a line longer than the agent's 65,536-character pieces joined again.
/// </summary>
public sealed class OutputTagTests
{
    private const string LongLine = "head -c 200000 /dev/zero | tr '\\0' x; echo; echo \"rank $PMPI_RANK\"; echo \"error $PMPI_RANK\" >&2";

    [LinuxFact]
    public async Task Run_NoTagOutput_PrintsEachLineAsTheRankWroteIt()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "--no-tag-output", "-n", "2", "/bin/sh", "-c", LongLine]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(2, run.Stdout.Count(line => line == new string('x', 200_000)));
        Assert.Equal(["rank 0", "rank 1"], run.Stdout.Where(line => line.StartsWith("rank ", StringComparison.Ordinal)).Order());
        Assert.Equal(["error 0", "error 1"], run.Stderr.Where(line => line.StartsWith("error ", StringComparison.Ordinal)).Order());
        Assert.Equal(4, run.Stdout.Count);
    }

    [LinuxFact]
    public async Task Run_TagOutputOrDefault_TagsEveryLineAndPieceWithItsRank()
    {
        foreach (string[] option in new[] { new[] { "--tag-output" }, [] })
        {
            // Act
            await using var run = PmpiCli.Start(["run", .. option, "-n", "1", "/bin/sh", "-c", LongLine]);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert: the line comes in pieces of at most 65,536 characters, each tagged.
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal(["[0] " + new string('x', 65_536), "[0] " + new string('x', 65_536), "[0] " + new string('x', 65_536), "[0] " + new string('x', 3_392), "[0] rank 0"], run.Stdout);
            Assert.Contains("[0] error 0", run.Stderr);
        }
    }

    [Fact]
    public async Task Run_TagOutputAndNoTagOutput_FailsNamingBoth()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "--tag-output", "--no-tag-output", PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("pmpi run: give --tag-output or --no-tag-output, not both.", run.Stderr);
    }
}
