using Pmpi.Collectives;

namespace Pmpi.Tests.Collectives;

/// <summary>
/// Allreduce by blocks (reduce-scatter by recursive halving, then allgather by recursive doubling) for every size
/// up to 9 ranks, powers of two and not, and array lengths that do not divide evenly (some shorter than the number of
/// ranks, so some blocks are empty); and through the public Allreduce with arrays past the threshold.
/// </summary>
public abstract class BlockAllreduceTests(Device device) : DeviceSuite(device)
{
    public static TheoryData<int, int> SizesAndLengths => new()
    {
        { 1, 5 }, { 2, 7 }, { 3, 1 }, { 3, 10 }, { 4, 4 }, { 4, 13 }, { 5, 3 }, { 5, 17 }, { 6, 29 }, { 7, 7 }, { 7, 50 }, { 8, 64 }, { 9, 100 },
    };

    [Theory]
    [MemberData(nameof(SizesAndLengths))]
    public void AllreduceByBlocks_SumAndMax_EveryRankGetsTheElementwiseResult(int size, int length)
    {
        // Act
        var results = Run(size, world => (
            Sum: ByBlocks(world, Values(world.Rank, length), Operation<long>.Add),
            Max: ByBlocks(world, Values(world.Rank, length), Operation<long>.Max)));

        // Assert
        var inputs = Enumerable.Range(0, size).Select(rank => Values(rank, length)).ToArray();
        var sum = Enumerable.Range(0, length).Select(i => inputs.Sum(input => input[i])).ToArray();
        var max = Enumerable.Range(0, length).Select(i => inputs.Max(input => input[i])).ToArray();
        Assert.All(results, result => Assert.Equal(sum, result.Sum));
        Assert.All(results, result => Assert.Equal(max, result.Max));
    }

    [Theory]
    [MemberData(nameof(SizesAndLengths))]
    public void AllreduceByBlocks_IntoAnotherArray_LeavesTheValuesAsTheyWere(int size, int length)
    {
        // Act
        var results = Run(size, world =>
        {
            var values = Values(world.Rank, length);
            var result = new long[length];
            CollectiveAlgorithms.AllreduceByBlocks(world, values, result, Operation<long>.Add);
            return (Values: values, Result: result, Rank: world.Rank);
        });

        // Assert
        var inputs = Enumerable.Range(0, size).Select(rank => Values(rank, length)).ToArray();
        var sum = Enumerable.Range(0, length).Select(i => inputs.Sum(input => input[i])).ToArray();
        Assert.All(results, result => Assert.Equal(sum, result.Result));
        Assert.All(results, result => Assert.Equal(inputs[result.Rank], result.Values));
    }

    [Theory]
    [InlineData(CollectiveSelection.BlockAllreduceRanks)]
    [InlineData(CollectiveSelection.BlockAllreduceRanks + 1)]
    public void Allreduce_ArrayPastTheThreshold_GoesByBlocksWithTheSameResult(int size)
    {
        // Arrange: a double[] of twice the threshold, whose sums are exact in any grouping (small integers).
        int length = 2 * CollectiveOptions.Default.BlockAllreduceFrom / sizeof(double) + 3;

        // Act
        var results = Run(size, world => world.Allreduce([.. Values(world.Rank, length).Select(v => (double)v)], Operation<double>.Add));

        // Assert
        var inputs = Enumerable.Range(0, size).Select(rank => Values(rank, length)).ToArray();
        var expected = Enumerable.Range(0, length).Select(i => (double)inputs.Sum(input => input[i])).ToArray();
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    /// <summary>
    /// A product of matrices does not commute: by blocks it must still come out in rank order, element by element,
    /// at every size (the halving pairs nearest ranks first, so each partial spans consecutive ranks).
    /// </summary>
    [Theory]
    [MemberData(nameof(SizesAndLengths))]
    public void AllreduceByBlocks_NonCommutativeProduct_EveryRankGetsTheProductInRankOrder(int size, int length)
    {
        var results = Run(size, world =>
        {
            var values = Matrices(world.Rank, length);
            CollectiveAlgorithms.AllreduceByBlocks(world, values, values, Matrix2.Multiply);
            return values;
        });

        var expected = ProductsInRankOrder(size, length);
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [InlineData(CollectiveSelection.BlockAllreduceRanks)]
    [InlineData(CollectiveSelection.BlockAllreduceRanks + 3)]
    public void Allreduce_NonCommutativeArrayPastTheThreshold_ProductInRankOrder(int size)
    {
        int length = CollectiveOptions.Default.BlockAllreduceFrom / 32 + 5; // a Matrix2 is 32 bytes

        var results = Run(size, world => world.Allreduce(Matrices(world.Rank, length), Matrix2.Multiply));

        var expected = ProductsInRankOrder(size, length);
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Fact]
    public void AllreduceByBlocks_ArraysOfDifferentLengths_FailsNamingTheLengths()
    {
        var error = Assert.ThrowsAny<Exception>(() => Run(4, world => ByBlocks(world, Values(world.Rank, world.Rank == 3 ? 9 : 8), Operation<long>.Add)));

        Assert.Contains("arrays of different lengths", error.ToString());
    }

    private static long[] ByBlocks(Intracommunicator world, long[] values, ReductionOperation<long> op)
    {
        CollectiveAlgorithms.AllreduceByBlocks(world, values, values, op);
        return values;
    }

    private static Matrix2[] ProductsInRankOrder(int size, int length)
    {
        var inputs = Enumerable.Range(0, size).Select(rank => Matrices(rank, length)).ToArray();
        return [.. Enumerable.Range(0, length).Select(i => inputs.Select(input => input[i]).Aggregate(Matrix2.Multiply))];
    }

    /// <summary>Small integer matrices that differ by rank and element, so a product out of order differs.</summary>
    private static Matrix2[] Matrices(int rank, int length) => [.. Enumerable.Range(0, length).Select(i => new Matrix2(rank + 1, i % 3, 1, rank % 2))];

    private static long[] Values(int rank, int length) => [.. Enumerable.Range(0, length).Select(i => (long)((rank + 1) * 1000 + i * (rank % 3 - 1)))];
}
