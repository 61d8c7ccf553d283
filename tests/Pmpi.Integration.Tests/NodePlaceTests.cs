using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>Each launched rank learns where it sits on its node: PMPI_LOCAL_RANK, PMPI_LOCAL_SIZE, PMPI_NODE_RANK, and the same through Environment.</summary>
public sealed class NodePlaceTests
{
    [Fact]
    public async Task Run_ThreeRanksOnTwoAgentProcesses_EachRankKnowsItsLocalRankLocalSizeAndNode()
    {
        // Arrange: placement fills node-a's two slots, then puts rank 2 on node-b.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("place.xml", Computation.Of("place", 3, ["place"], ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", nodeA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Contains("[0] place local=0/2 node=0 variables=0/2 node=0", run.Stdout);
            Assert.Contains("[1] place local=1/2 node=0 variables=1/2 node=0", run.Stdout);
            Assert.Contains("[2] place local=0/1 node=1 variables=0/1 node=1", run.Stdout);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
