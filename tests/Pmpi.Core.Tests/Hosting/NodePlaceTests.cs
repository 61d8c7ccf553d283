using Pmpi.Hosting;

namespace Pmpi.Tests.Hosting;

/// <summary>A rank that learns every rank's node (a PMI-launched rank) works out its place as the master would.</summary>
public sealed class NodePlaceTests
{
    [Fact]
    public void Among_OneNode_LocalRankIsTheWorldRankAndNodeRankZero()
    {
        string[] nodes = ["n", "n", "n"];

        Assert.Equal([new NodePlace(0, 3, 0), new NodePlace(1, 3, 0), new NodePlace(2, 3, 0)], Enumerable.Range(0, 3).Select(rank => NodePlace.Among(nodes, rank)));
    }

    [Fact]
    public void Among_RanksDealtOverNodes_CountsLocalRanksInWorldOrderAndNodesByTheirFirstRank()
    {
        // Round-robin over three nodes, the last node first seen at rank 2, as srun --distribution=cyclic places them.
        string[] nodes = ["b", "a", "c", "b", "a"];

        var places = Enumerable.Range(0, nodes.Length).Select(rank => NodePlace.Among(nodes, rank)).ToArray();

        Assert.Equal([new NodePlace(0, 2, 0), new NodePlace(0, 2, 1), new NodePlace(0, 1, 2), new NodePlace(1, 2, 0), new NodePlace(1, 2, 1)], places);
    }

    [Fact]
    public void Among_RankOutsideTheWorld_Throws()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => NodePlace.Among(["n"], 1));
    }
}
