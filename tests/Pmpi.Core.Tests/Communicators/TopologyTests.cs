namespace Pmpi.Tests.Communicators;

/// <summary>MPI.NET's topology API: Cartesian neighbours, edges and sub-grids; graph communicators.</summary>
public abstract class TopologyTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Neighbors_OnPeriodicRing_AreBothSidesAndShiftAgrees(int size)
    {
        var results = Run(size, world =>
        {
            using var ring = new CartesianCommunicator(world, 1, [size], [true], reorder: false);
            ring.Shift(0, 1, out int source, out int dest);
            // Each rank passes its rank right along the ring; the neighbours exchange over the topology.
            int fromLeft = ring.SendReceive<int, int>(ring.Rank, dest, 0, source, 0, out _);
            return (ring.Neighbors, ring.NumEdges, source, dest, fromLeft);
        });

        for (int rank = 0; rank < size; rank++)
        {
            int left = (rank - 1 + size) % size, right = (rank + 1) % size;
            Assert.Equal([left, right], results[rank].Neighbors);
            Assert.Equal(size, results[rank].NumEdges); // a ring of n ranks has n edges
            Assert.Equal((left, right, left), (results[rank].source, results[rank].dest, results[rank].fromLeft));
        }
    }

    [Fact]
    public void NeighborsAndNumEdges_OnOpenGrid_CountEachEdgeOnce()
    {
        var results = Run(6, world =>
        {
            using var grid = new CartesianCommunicator(world, 2, [2, 3], [false, false], reorder: false);
            return (grid.Neighbors, grid.NumEdges);
        });

        // A 2x3 open grid: 2 * 2 horizontal and 3 vertical edges.
        Assert.All(results, r => Assert.Equal(7, r.NumEdges));
        Assert.Equal([3, 1], results[0].Neighbors);        // down, then right
        Assert.Equal([1, 3, 5], results[4].Neighbors);     // up, left, right
    }

    [Theory]
    [InlineData(new[] { 0, 1 }, 3)]  // rows of 3
    [InlineData(new[] { 1, 0 }, 2)]  // columns of 2
    public void Subgrid_KeepingOneDimension_GivesRowsOrColumnsInOrder(int[] remain, int expectedSize)
    {
        var results = Run(6, world =>
        {
            using var grid = new CartesianCommunicator(world, 2, [2, 3], [false, true], reorder: false);
            using var sub = grid.Subgrid(remain);
            // The sub-grid's members, as world ranks, gathered within it.
            return (sub.Size, sub.Dimensions, sub.Periodic, Members: sub.Allgather(world.Rank));
        });

        Assert.All(results, r => Assert.Equal(expectedSize, r.Size));
        if (remain[1] == 1)
        {
            Assert.Equal([0, 1, 2], results[1].Members);
            Assert.Equal([3, 4, 5], results[5].Members);
            Assert.Equal([3], results[0].Dimensions);
            Assert.Equal([true], results[0].Periodic);
        }
        else
        {
            Assert.Equal([1, 4], results[4].Members);
            Assert.Equal([2], results[0].Dimensions);
            Assert.Equal([false], results[0].Periodic);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void GraphCommunicator_Star_GivesNeighboursEdgesAndCarriesMessages(int size)
    {
        // Rank 0 is the hub, linked both ways with every other rank.
        int[][] edges = [.. Enumerable.Range(0, size).Select(r => r == 0 ? Enumerable.Range(1, size - 1).ToArray() : [0])];
        var results = Run(size, world =>
        {
            using var star = new GraphCommunicator(world, edges, reorder: false);
            int sum = 0;
            if (star.Rank == 0) foreach (var leaf in star.Neighbors) sum += star.Receive<int>(leaf, 5);
            else star.Send(star.Rank, star.Neighbors[0], 5);
            return (star.Neighbors, star.NumEdges, star.Edges, sum, Map: GraphCommunicator.Map(world, edges));
        });

        Assert.Equal(Enumerable.Range(1, size - 1), results[0].Neighbors);
        Assert.Equal(size * (size - 1) / 2, results[0].sum);
        Assert.All(results.Skip(1), r => Assert.Equal([0], r.Neighbors));
        Assert.All(results, r => Assert.Equal(2 * (size - 1), r.NumEdges));
        Assert.All(results, r => Assert.Equal(edges, r.Edges));
        Assert.Equal(Enumerable.Range(0, size), results.Select(r => r.Map));
    }

    [Fact]
    public void GraphCommunicator_NeighbourOutsideGraph_ThrowsNamingNodeAndNeighbour()
    {
        var error = Assert.Throws<MpiException>(() => Run(2, world => new GraphCommunicator(world, [[1], [2]], reorder: false)));

        var cause = Assert.IsType<MpiException>(error.InnerException);
        Assert.Equal(ErrorClass.InvalidRank, cause.ErrorClass);
        Assert.Contains("Node 1 of the graph names neighbour 2", cause.Message);
    }
}
