using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>A large array crosses between two rank processes intact (chunked by the gRPC device).</summary>
public sealed class LargeMessageTests
{
    [Fact]
    public async Task Run_256MegabyteDoubleArrayBetweenTwoRanks_ReceiverFindsEveryElementEqual()
    {
        // Arrange: rank 0 fills 256 MB of doubles, rank 1 receives them and compares each with what it expects.
        const int Megabytes = 256;
        const int Doubles = Megabytes * 1024 * 1024 / sizeof(double);

        // Act
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "big", $"{Megabytes}"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Contains($"[0] sent {Doubles} doubles", run.Stdout);
            Assert.Contains($"[1] big ok {Doubles} doubles", run.Stdout);
        }
        finally
        {
            var hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
