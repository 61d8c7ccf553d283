namespace Pmpi.Tests.Collectives;

public abstract class ScanTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Scan_ValuesWithAdd_RankRGetsSumOfRanksZeroToR(int size)
    {
        // Act
        var results = Run(size, world => (
            Int: world.Scan(Data.Int(world.Rank), Operation<int>.Add),
            Double: world.Scan(Data.Double(world.Rank), Operation<double>.Add),
            Vector: world.Scan(Data.Vector(world.Rank), Operation<Vector2D>.Add)));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var expected = (Data.Fold(rank + 1, Data.Int, (a, b) => a + b), Data.Fold(rank + 1, Data.Double, (a, b) => a + b), Data.Fold(rank + 1, Data.Vector, (a, b) => a + b));
            Assert.Equal(expected, results[rank]);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Scan_ArraysWithAdd_RankRGetsElementwisePrefixSum(int size)
    {
        // Act
        var results = Run(size, world => world.Scan(Data.IntArray(world.Rank, 3), Operation<int>.Add));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            int last = rank;
            Assert.Equal(Enumerable.Range(0, 3).Select(i => Enumerable.Range(0, last + 1).Sum(r => r * 10 + i)), results[rank]);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ExclusiveScan_ValuesWithAdd_RankZeroGetsDefaultOthersSumOfLowerRanks(int size)
    {
        // Act
        var results = Run(size, world => (
            Int: world.ExclusiveScan(Data.Int(world.Rank), Operation<int>.Add),
            Double: world.ExclusiveScan(Data.Double(world.Rank), Operation<double>.Add),
            Vector: world.ExclusiveScan(Data.Vector(world.Rank), Operation<Vector2D>.Add),
            Text: world.ExclusiveScan(Data.Text(world.Rank), Operation<string>.Add)));

        // Assert
        Assert.Equal(default, results[0]);
        for (int rank = 1; rank < size; rank++)
        {
            var expected = (Data.Fold(rank, Data.Int, (a, b) => a + b), Data.Fold(rank, Data.Double, (a, b) => a + b),
                Data.Fold(rank, Data.Vector, (a, b) => a + b), Data.TextUpTo(rank - 1));
            Assert.Equal(expected, results[rank]);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ExclusiveScan_ArraysWithAdd_RankZeroGetsNullOthersElementwiseSumOfLowerRanks(int size)
    {
        // Act
        var results = Run(size, world => world.ExclusiveScan([Data.Double(world.Rank), 1.0], Operation<double>.Add));

        // Assert
        Assert.Null(results[0]);
        for (int rank = 1; rank < size; rank++)
            Assert.Equal([Data.Fold(rank, Data.Double, (a, b) => a + b), rank], results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Scan_ArraysAboveEagerLimit_RankRGetsElementwisePrefixSum(int size)
    {
        // Arrange: 10,000 doubles (80 KB) go by rendezvous in every exchange.
        const int length = 10_000;

        // Act
        var results = Run(size, world =>
            world.Scan(Enumerable.Range(0, length).Select(i => (double)(i + world.Rank)).ToArray(), Operation<double>.Add));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            int count = rank + 1, rankSum = rank * (rank + 1) / 2;
            Assert.Equal(Enumerable.Range(0, length).Select(i => (double)(i * count + rankSum)), results[rank]);
        }
    }
}
