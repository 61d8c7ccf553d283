using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>Two `pmpi agent` processes on different ports act as two nodes of one computation.</summary>
public sealed class TwoNodeTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Run_ComputationOnTwoAgentProcesses_RanksSpanBothNodesAndCollectivesAgree(bool submitToAgent)
    {
        // Arrange: placement fills node-a's two slots first, then node-b's.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("two-nodes.xml", Computation.Of("two-nodes", 4, ["collectives"], ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)));
        string[] master = submitToAgent ? ["--master", nodeA.Address.ToString()] : [];

        // Act
        await using var run = PmpiCli.Start(["run", .. master, file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal([0, 1, 2, 3], hellos.Select(h => h.Rank).Order());
            Assert.All(hellos, h => Assert.Equal((h.Tag, 4), (h.Rank, h.Size)));
            Assert.Equal(["node-a", "node-a", "node-b", "node-b"], hellos.OrderBy(h => h.Rank).Select(h => h.Agent));
            Assert.Contains("[0] allreduce=10 gather=1,2,3,4", run.Stdout);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
