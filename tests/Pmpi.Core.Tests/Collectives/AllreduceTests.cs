namespace Pmpi.Tests.Collectives;

public abstract class AllreduceTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ValuesWithAdd_EveryRankGetsSum(int size)
    {
        // Act
        var results = Run(size, world => (
            Int: world.Allreduce(Data.Int(world.Rank), Operation<int>.Add),
            Double: world.Allreduce(Data.Double(world.Rank), Operation<double>.Add),
            Vector: world.Allreduce(Data.Vector(world.Rank), Operation<Vector2D>.Add)));

        // Assert
        var expected = (Data.Fold(size, Data.Int, (a, b) => a + b), Data.Fold(size, Data.Double, (a, b) => a + b), Data.Fold(size, Data.Vector, (a, b) => a + b));
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArraysWithMaxAndAdd_EveryRankGetsElementwiseResult(int size)
    {
        // Act
        var results = Run(size, world => (
            Ints: world.Allreduce(Data.IntArray(world.Rank), Operation<int>.Max),
            Doubles: world.Allreduce([Data.Double(world.Rank), -world.Rank], Operation<double>.Add),
            Vectors: world.Allreduce([Data.Vector(world.Rank)], Operation<Vector2D>.Add)));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        Assert.All(results, result =>
        {
            Assert.Equal(Data.IntArray(size - 1), result.Ints);
            Assert.Equal([ranks.Sum(Data.Double), -ranks.Sum()], result.Doubles);
            Assert.Equal([Data.Fold(size, Data.Vector, (a, b) => a + b)], result.Vectors);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArraysAboveEagerLimit_EveryRankGetsElementwiseSum(int size)
    {
        // Arrange: 10,000 doubles (80 KB) go by rendezvous in the fold and in every doubling exchange.
        const int length = 10_000;

        // Act
        var results = Run(size, world =>
            world.Allreduce(Enumerable.Range(0, length).Select(i => (double)(i * world.Rank)).ToArray(), Operation<double>.Add));

        // Assert
        int rankSum = size * (size - 1) / 2;
        var expected = Enumerable.Range(0, length).Select(i => (double)(i * rankSum)).ToArray();
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(7)]
    [InlineData(8)]
    public void Allreduce_ArraysOfDifferentLengths_ThrowsInvalidCount(int size)
    {
        // Act: the last rank's array is one element longer.
        var error = Assert.Throws<MpiException>(() => Run(size, world =>
            world.Allreduce(new int[world.Rank == size - 1 ? 3 : 2], Operation<int>.Add)));

        // Assert
        var cause = Assert.IsType<MpiException>(error.InnerException);
        Assert.Equal(ErrorClass.InvalidCount, cause.ErrorClass);
        Assert.Contains("different lengths", cause.Message);
    }
}
