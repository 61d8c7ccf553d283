namespace Pmpi.Tests.Collectives;

public abstract class ReduceTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_ValuesWithAdd_RootGetsSumOthersDefault(int size, int root)
    {
        // Act
        var results = Run(size, world => (
            Int: world.Reduce(Data.Int(world.Rank), Operation<int>.Add, root),
            Double: world.Reduce(Data.Double(world.Rank), Operation<double>.Add, root),
            Vector: world.Reduce(Data.Vector(world.Rank), Operation<Vector2D>.Add, root)));

        // Assert
        var expected = (Data.Fold(size, Data.Int, (a, b) => a + b), Data.Fold(size, Data.Double, (a, b) => a + b), Data.Fold(size, Data.Vector, (a, b) => a + b));
        for (int rank = 0; rank < size; rank++)
            Assert.Equal(rank == root ? expected : default, results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_ArraysWithAdd_RootGetsElementwiseSumOthersNull(int size, int root)
    {
        // Act
        var results = Run(size, world => (
            Ints: world.Reduce(Data.IntArray(world.Rank), Operation<int>.Add, root),
            Doubles: world.Reduce([Data.Double(world.Rank), world.Rank, -1.0], Operation<double>.Add, root),
            Vectors: world.Reduce([Data.Vector(world.Rank), Data.Vector(2 * world.Rank)], Operation<Vector2D>.Add, root)));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            var result = results[rank];
            if (rank == root)
            {
                Assert.Equal(Enumerable.Range(0, 5).Select(i => ranks.Sum(r => r * 10 + i)), result.Ints);
                Assert.Equal(new[] { ranks.Sum(Data.Double), ranks.Sum(), -size }, result.Doubles);
                Assert.Equal(new[] { Data.Fold(size, Data.Vector, (a, b) => a + b), Data.Fold(size, r => Data.Vector(2 * r), (a, b) => a + b) }, result.Vectors);
            }
            else
            {
                Assert.Null(result.Ints);
                Assert.Null(result.Doubles);
                Assert.Null(result.Vectors);
            }
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_ArraysAboveEagerLimit_RootGetsElementwiseSum(int size, int root)
    {
        // Arrange: 10,000 doubles (80 KB) per rank travel the tree by rendezvous.
        const int length = 10_000;

        // Act
        var results = Run(size, world =>
            world.Reduce(Enumerable.Range(0, length).Select(i => (double)(i + world.Rank)).ToArray(), Operation<double>.Add, root));

        // Assert
        int rankSum = size * (size - 1) / 2;
        Assert.Equal(Enumerable.Range(0, length).Select(i => (double)(i * size + rankSum)), results[root]);
    }
}
