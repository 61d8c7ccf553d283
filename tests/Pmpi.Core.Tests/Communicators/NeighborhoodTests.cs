namespace Pmpi.Tests.Communicators;

/// <summary>
/// The neighbourhood collectives (MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v) and their nonblocking forms) on
/// Cartesian grids and graphs: two slots per dimension, down then up, or one per graph neighbour.
/// </summary>
public abstract class NeighborhoodTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [InlineData(6, false)]
    [InlineData(6, true)]
    public void NeighborAllgather_OnAGrid_GivesEachSlotsRank_DefaultOffTheEdge(int size, bool periodic)
    {
        var results = Run(size, world =>
        {
            using var grid = new CartesianCommunicator(world, 2, [2, 3], [periodic, periodic], reorder: false);
            return (grid.NeighborAllgather(grid.Rank + 1), grid.ImmediateNeighborAllgather(grid.Rank + 1).Value, Expected(grid));
        });

        Assert.All(results, r => Assert.Equal(r.Item3.Select(s => s + 1), r.Item1));
        Assert.All(results, r => Assert.Equal(r.Item1, r.Item2));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void NeighborAlltoall_OnAPeriodicRing_DownSlotGetsWhatTheDownNeighbourSentUp_EvenWhenItIsBothNeighbours(int size)
    {
        // On a ring of one or two ranks, a rank is both neighbours of another (or its own): the slots must still pair.
        var results = Run(size, world =>
        {
            using var ring = new CartesianCommunicator(world, 1, [size], [true], reorder: false);
            int[] sent = [ring.Rank * 10, ring.Rank * 10 + 1]; // [to the down neighbour, to the up neighbour]
            return (ring.NeighborAlltoall(sent), ring.ImmediateNeighborAlltoall(sent).Value);
        });

        for (int rank = 0; rank < size; rank++)
        {
            int down = (rank - 1 + size) % size, up = (rank + 1) % size;
            int[] expected = [down * 10 + 1, up * 10];
            Assert.Equal(expected, results[rank].Item1);
            Assert.Equal(expected, results[rank].Item2);
        }
    }

    [Fact]
    public void NeighborAlltoallAndAllgather_OneRankByValuesTheOthersByBlocksOfOne_GiveTheSame()
    {
        // As a classic-face rank (blocks of a count) meets an F# rank (values) in one call.
        var results = Run(3, world =>
        {
            using var ring = new CartesianCommunicator(world, 1, [3], [true], reorder: false);
            int[] sent = [ring.Rank * 10, ring.Rank * 10 + 1];
            return ring.Rank == 0
                ? (ring.NeighborAlltoall(sent), ring.NeighborAllgather(ring.Rank))
                : (ring.NeighborAlltoallFlattened(sent, [1, 1], [1, 1]), ring.NeighborAllgatherFlattened([ring.Rank], [1, 1]));
        });

        for (int rank = 0; rank < 3; rank++)
        {
            int down = (rank + 2) % 3, up = (rank + 1) % 3;
            Assert.Equal([down * 10 + 1, up * 10], results[rank].Item1);
            Assert.Equal([down, up], results[rank].Item2);
        }
    }

    [Fact]
    public void NeighborAlltoallFlattened_OnANonPeriodicLine_MovesBlocksOfTheirCounts()
    {
        var results = Run(4, world =>
        {
            using var line = new CartesianCommunicator(world, 1, [4], [false], reorder: false);
            // One element goes down and two up, so two come from below and one from above.
            int[] values = [line.Rank * 10, line.Rank * 10 + 1, line.Rank * 10 + 2];
            return line.NeighborAlltoallFlattened(values, [1, 2], [2, 1]);
        });

        for (int rank = 0; rank < 4; rank++)
        {
            int[] fromDown = rank > 0 ? [(rank - 1) * 10 + 1, (rank - 1) * 10 + 2] : [0, 0];
            int[] fromUp = rank < 3 ? [(rank + 1) * 10] : [0];
            Assert.Equal([.. fromDown, .. fromUp], results[rank]);
        }
    }

    [Fact]
    public void NeighborCollectives_OnAGraphWithARepeatedEdge_FollowTheNeighbourLists()
    {
        int[][] edges = [[1, 2], [0, 2, 2], [0, 1, 1]];
        var results = Run(3, world =>
        {
            using var graph = new GraphCommunicator(world, edges, reorder: false);
            var mine = graph.Neighbors;
            var gathered = graph.NeighborAllgatherFlattened(new[] { graph.Rank, graph.Rank }, [.. mine.Select(_ => 2)]);
            var exchanged = graph.NeighborAlltoall(mine.Select((to, slot) => $"{graph.Rank}->{to}#{slot}").ToArray());
            return (gathered, exchanged);
        });

        Assert.Equal([1, 1, 2, 2], results[0].gathered);
        Assert.Equal(["1->0#0", "2->0#0"], results[0].exchanged);
        Assert.Equal(["0->1#0", "2->1#1", "2->1#2"], results[1].exchanged);
        Assert.Equal(["0->2#1", "1->2#1", "1->2#2"], results[2].exchanged);
    }

    [Fact]
    public void NeighborAllgather_OnAnAsymmetricGraph_FailsNamingTheEdge()
    {
        var results = Run(2, world =>
        {
            using var graph = new GraphCommunicator(world, [[1], []], reorder: false);
            return Assert.Throws<MpiException>(() => graph.NeighborAllgather(1)).Message;
        });

        Assert.All(results, message => Assert.Contains("node 0 lists 1 1 time(s), node 1 lists 0 0 time(s)", message));
    }

    [Fact]
    public void NeighborAlltoall_WrongNumberOfBlocks_FailsNamingTheSlots()
    {
        var results = Run(2, world =>
        {
            using var ring = new CartesianCommunicator(world, 1, [2], [true], reorder: false);
            return Assert.Throws<MpiException>(() => ring.NeighborAlltoall(new[] { 1 })).Message;
        });

        Assert.All(results, message => Assert.Contains("must hold 2 elements, one per neighbour", message));
    }

    // The ranks in each slot: along each dimension, the one down then the one up; -1 where none (ProcNull's slot receives default 0, so +1 gives 0).
    private static int[] Expected(CartesianCommunicator grid) =>
        [.. Enumerable.Range(0, grid.Dimensions.Length).SelectMany(d =>
        {
            grid.Shift(d, 1, out int down, out int up);
            return new[] { down, up }.Select(r => r == Communicator.ProcNull ? -1 : r);
        })];
}
