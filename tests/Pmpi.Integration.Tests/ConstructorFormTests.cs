using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>MPI.NET's opening, <c>using (new Environment(ref args)) { Communicator.world ... }</c>, under `pmpi run`.</summary>
public sealed class ConstructorFormTests
{
    [Fact]
    public async Task Run_ConstructorFormUnderPmpiRun_EachProcessIsItsOwnRankOfOneWorld()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "4", PmpiCli.TestRanksDll, "constructor"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: four different ranks of one 4-rank world (the allreduce of the ranks is 0+1+2+3 on each), nested
        // initialization joined that world, and after Dispose PMPI refused to start again.
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal([0, 1, 2, 3], hellos.Select(h => h.Rank).Order());
            Assert.Equal(4, hellos.Select(h => h.ProcessId).Distinct().Count());
            for (int rank = 0; rank < 4; rank++)
            {
                Assert.Contains($"[{rank}] constructor rank={rank} size=4 sum=6 nested=same run=same main=True initialized=True", run.Stdout);
                Assert.Contains($"[{rank}] after finalized=True initialized=False again=refused", run.Stdout);
            }
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
