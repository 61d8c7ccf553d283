namespace Pmpi.Tests.Collectives;

public abstract class GatherTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Gather_Values_RootGetsEveryRanksValueInRankOrderOthersNull(int size, int root)
    {
        // Act
        var results = Run(size, world => (
            Ints: world.Gather(Data.Int(world.Rank), root),
            Doubles: world.Gather(Data.Double(world.Rank), root),
            Vectors: world.Gather(Data.Vector(world.Rank), root),
            Texts: world.Gather(Data.Text(world.Rank), root),
            Arrays: world.Gather(Data.IntArray(world.Rank, world.Rank), root)));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            var result = results[rank];
            if (rank == root)
            {
                Assert.Equal(ranks.Select(Data.Int), result.Ints);
                Assert.Equal(ranks.Select(Data.Double), result.Doubles);
                Assert.Equal(ranks.Select(Data.Vector), result.Vectors);
                Assert.Equal(ranks.Select(Data.Text), result.Texts);
                Assert.Equal(ranks.Select(r => Data.IntArray(r, r)), result.Arrays);
            }
            else
            {
                Assert.Null(result.Ints);
                Assert.Null(result.Doubles);
                Assert.Null(result.Vectors);
                Assert.Null(result.Texts);
                Assert.Null(result.Arrays);
            }
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void GatherFlattened_VariableCountsIncludingZero_RootGetsBlocksInRankOrder(int size, int root)
    {
        // Arrange
        var counts = Enumerable.Range(0, size).Select(Data.Count).ToArray();

        // Act
        var results = Run(size, world => (
            Ints: world.GatherFlattened(Data.IntArray(world.Rank, counts[world.Rank]), counts, root),
            Texts: world.GatherFlattened(Data.TextArray(world.Rank, counts[world.Rank]), counts, root)));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            if (rank == root)
            {
                Assert.Equal(Enumerable.Range(0, size).SelectMany(r => Data.IntArray(r, counts[r])), results[rank].Ints);
                Assert.Equal(Enumerable.Range(0, size).SelectMany(r => Data.TextArray(r, counts[r])), results[rank].Texts);
            }
            else
            {
                Assert.Null(results[rank].Ints);
                Assert.Null(results[rank].Texts);
            }
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void GatherFlattened_CountsOnlyAtRoot_NonRootsMayPassNull(int size, int root)
    {
        // Act
        var results = Run(size, world =>
            world.GatherFlattened(Data.IntArray(world.Rank, world.Rank + 1), world.Rank == root ? [.. Enumerable.Range(1, size)] : null!, root));

        // Assert
        Assert.Equal(Enumerable.Range(0, size).SelectMany(r => Data.IntArray(r, r + 1)), results[root]);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void GatherFlattened_EqualLengths_RootGetsConcatenationInRankOrder(int size, int root)
    {
        // Act
        var results = Run(size, world => (
            Doubles: world.GatherFlattened([Data.Double(world.Rank), -Data.Double(world.Rank)], root),
            Vectors: world.GatherFlattened([Data.Vector(world.Rank), Data.Vector(world.Rank + size)], root)));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        Assert.Equal(ranks.SelectMany(r => new[] { Data.Double(r), -Data.Double(r) }), results[root].Doubles);
        Assert.Equal(ranks.SelectMany(r => new[] { Data.Vector(r), Data.Vector(r + size) }), results[root].Vectors);
        Assert.All(results.Where((_, rank) => rank != root), result => Assert.Null(result.Doubles));
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void GatherFlattened_BlocksAboveEagerLimit_RootGetsBlocksInRankOrder(int size, int root)
    {
        // Arrange: 9,000 doubles (72 KB) per rank, so every subtree goes up the tree by rendezvous.
        const int block = 9_000;

        // Act
        var results = Run(size, world =>
            world.GatherFlattened(Enumerable.Range(world.Rank * block, block).Select(i => (double)i).ToArray(), root));

        // Assert
        Assert.Equal(Enumerable.Range(0, size * block).Select(i => (double)i), results[root]);
    }
}
