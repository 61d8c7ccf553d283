namespace Pmpi.Tests.Communicators;

public abstract class CartesianTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [InlineData(12, 2, new[] { 0, 0 }, new[] { 4, 3 })]
    [InlineData(8, 3, new[] { 0, 0, 0 }, new[] { 2, 2, 2 })]
    [InlineData(12, 2, new[] { 0, 2 }, new[] { 6, 2 })]
    [InlineData(7, 2, new[] { 0, 0 }, new[] { 7, 1 })]
    public void ComputeDimensions_FillsFreeDimensionsBalanced(int nodes, int ndims, int[] dims, int[] expected)
    {
        CartesianCommunicator.ComputeDimensions(nodes, ndims, ref dims);

        Assert.Equal(expected, dims);
    }

    /// <summary>MPI.NET's count (its CartTest): d - 1 edges per line, one more where periodic, even for d of 1 or 2.</summary>
    [Theory]
    [InlineData(new[] { 2, 2 }, new[] { true, true }, 8)]
    [InlineData(new[] { 2, 3 }, new[] { false, true }, 3 + 6)]
    [InlineData(new[] { 4 }, new[] { true }, 4)]
    [InlineData(new[] { 3, 1 }, new[] { false, true }, 2 + 3)]
    [InlineData(new[] { 2, 2, 2 }, new[] { false, false, false }, 12)]
    public void NumEdges_CountsAsMpiNetDoes(int[] dims, bool[] periods, int expected)
    {
        int size = dims.Aggregate(1, (a, b) => a * b);

        var edges = Run(size, world =>
        {
            using var grid = new CartesianCommunicator(world, dims.Length, dims, periods, reorder: false);
            return grid.NumEdges;
        });

        Assert.All(edges, count => Assert.Equal(expected, count));
    }

    [Fact]
    public void Shift_OnPeriodicAndOpenDimensions_GivesNeighboursOrProcNull()
    {
        var results = Run(6, world =>
        {
            using var grid = new CartesianCommunicator(world, 2, [2, 3], [false, true], reorder: false);
            grid.Shift(0, 1, out int up, out int down);
            grid.Shift(1, 1, out int left, out int right);
            return (Coordinates: grid.Coordinates, up, down, left, right, Back: grid.GetCartesianRank(grid.Coordinates));
        });

        Assert.Equal([0, 0], results[0].Coordinates);
        Assert.Equal([1, 2], results[5].Coordinates);
        Assert.Equal((Communicator.ProcNull, 3, 2, 1), (results[0].up, results[0].down, results[0].left, results[0].right));
        Assert.Equal((2, Communicator.ProcNull, 4, 3), (results[5].up, results[5].down, results[5].left, results[5].right));
        Assert.All(Enumerable.Range(0, 6), r => Assert.Equal(r, results[r].Back));
    }

    [Fact]
    public void SendReceive_AlongOpenEdge_ProcNullIsANoOp()
    {
        var results = Run(4, world =>
        {
            using var line = new CartesianCommunicator(world, 1, [4], [false], reorder: false);
            line.Shift(0, 1, out int source, out int dest);
            int received = line.SendReceive<int, int>(line.Rank * 10, dest, 0, source, 0, out var status);
            return status.Source == Communicator.ProcNull ? -1 : received;
        });

        Assert.Equal([-1, 0, 10, 20], results);
    }

    [Fact]
    public void Constructor_GridOfWrongSize_ThrowsInvalidArgument()
    {
        Run(4, world =>
            Assert.Equal(ErrorClass.InvalidArgument, Assert.Throws<MpiException>(() => new CartesianCommunicator(world, 2, [3, 2], [false, false], false)).ErrorClass));
    }
}
