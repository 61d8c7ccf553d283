namespace Pmpi.Tests.Collectives;

public abstract class ScatterTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Scatter_Values_EachRankGetsItsElementOfTheRootsArray(int size, int root)
    {
        // Arrange
        var ranks = Enumerable.Range(0, size).ToArray();
        int[] ints = [.. ranks.Select(Data.Int)];
        double[] doubles = [.. ranks.Select(Data.Double)];
        Vector2D[] vectors = [.. ranks.Select(Data.Vector)];
        string[] texts = [.. ranks.Select(Data.Text)];
        int[][] arrays = [.. ranks.Select(r => Data.IntArray(r, r))];

        // Act: non-roots pass null, which is allowed there.
        var results = Run(size, world =>
        {
            bool isRoot = world.Rank == root;
            return (
                Int: world.Scatter(isRoot ? ints : null, root),
                Double: world.Scatter(isRoot ? doubles : null, root),
                Vector: world.Scatter(isRoot ? vectors : null, root),
                Text: world.Scatter(isRoot ? texts : null, root),
                Array: world.Scatter(isRoot ? arrays : null, root));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var result = results[rank];
            Assert.Equal((Data.Int(rank), Data.Double(rank), Data.Vector(rank), Data.Text(rank)), (result.Int, result.Double, result.Vector, result.Text));
            Assert.Equal(Data.IntArray(rank, rank), result.Array);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_VariableCountsIncludingZero_EachRankGetsItsBlock(int size, int root)
    {
        // Arrange
        var counts = Enumerable.Range(0, size).Select(Data.Count).ToArray();
        int[] ints = [.. Enumerable.Range(0, size).SelectMany(r => Data.IntArray(r, counts[r]))];
        string[] texts = [.. Enumerable.Range(0, size).SelectMany(r => Data.TextArray(r, counts[r]))];

        // Act
        var results = Run(size, world => (
            Ints: world.ScatterFromFlattened(world.Rank == root ? ints : null, counts, root),
            Texts: world.ScatterFromFlattened(world.Rank == root ? texts : null, counts, root)));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(Data.IntArray(rank, counts[rank]), results[rank].Ints);
            Assert.Equal(Data.TextArray(rank, counts[rank]), results[rank].Texts);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_AllToOneRank_OthersGetEmptyBlocks(int size, int root)
    {
        // Arrange: everything goes to the last rank, so every other rank's count is zero.
        var counts = new int[size];
        counts[size - 1] = 4;
        Vector2D[] vectors = [.. Enumerable.Range(0, 4).Select(Data.Vector)];

        // Act
        var results = Run(size, world => world.ScatterFromFlattened(world.Rank == root ? vectors : null, counts, root));

        // Assert
        for (int rank = 0; rank < size - 1; rank++) Assert.Empty(results[rank]);
        Assert.Equal(vectors, results[size - 1]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_BlocksAboveEagerLimit_EachRankGetsItsBlock(int size)
    {
        // Arrange: 12,000 doubles per rank, so subtrees travel by rendezvous.
        const int block = 12_000;
        var counts = Enumerable.Repeat(block, size).ToArray();
        var all = Enumerable.Range(0, block * size).Select(i => (double)i).ToArray();

        // Act
        var results = Run(size, world => world.ScatterFromFlattened(world.Rank == 0 ? all : null, counts, 0));

        // Assert
        for (int rank = 0; rank < size; rank++) Assert.Equal(all.Skip(rank * block).Take(block), results[rank]);
    }
}
