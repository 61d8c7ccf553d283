namespace Pmpi.Tests.Collectives;

/// <summary>Reductions must combine op(lower ranks, higher ranks) for any associative operation (MPI-4.1 §6.9.1).</summary>
public abstract class NonCommutativeTests(Device device) : DeviceSuite(device)
{
    private static readonly ReductionOperation<Matrix2> MatrixProduct = Matrix2.Multiply;

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_StringConcatenation_RootGetsRanksInOrder(int size, int root)
    {
        // Act
        var results = Run(size, world => world.Reduce(Data.Text(world.Rank), Operation<string>.Add, root));

        // Assert
        for (int rank = 0; rank < size; rank++) Assert.Equal(rank == root ? Data.TextUpTo(size - 1) : null, results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_StringArraysConcatenatedElementwise_RootGetsRanksInOrderPerElement(int size, int root)
    {
        // Act
        var results = Run(size, world => world.Reduce([Data.Text(world.Rank), $"{world.Rank};"], Operation<string>.Add, root));

        // Assert
        Assert.Equal(new[] { Data.TextUpTo(size - 1), string.Concat(Enumerable.Range(0, size).Select(r => $"{r};")) }, results[root]);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Reduce_MatrixProduct_RootGetsProductInRankOrder(int size, int root)
    {
        // Act
        var results = Run(size, world => world.Reduce(Data.Matrix(world.Rank), MatrixProduct, root));

        // Assert
        Assert.Equal(Data.Fold(size, Data.Matrix, Matrix2.Multiply), results[root]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_StringConcatenationAndMatrixProduct_EveryRankGetsRanksInOrder(int size)
    {
        // Act
        var results = Run(size, world => (
            Text: world.Allreduce(Data.Text(world.Rank), Operation<string>.Add),
            Matrix: world.Allreduce(Data.Matrix(world.Rank), MatrixProduct)));

        // Assert
        var expected = (Data.TextUpTo(size - 1), Data.Fold(size, Data.Matrix, Matrix2.Multiply));
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_StringArraysConcatenatedElementwise_EveryRankGetsRanksInOrder(int size)
    {
        // Act
        var results = Run(size, world => world.Allreduce([$"<{world.Rank}", Data.Text(world.Rank)], Operation<string>.Add));

        // Assert
        string[] expected = [string.Concat(Enumerable.Range(0, size).Select(r => $"<{r}")), Data.TextUpTo(size - 1)];
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Scan_StringConcatenationAndMatrixProduct_RankRGetsRanksZeroToRInOrder(int size)
    {
        // Act
        var results = Run(size, world => (
            Text: world.Scan(Data.Text(world.Rank), Operation<string>.Add),
            Matrix: world.Scan(Data.Matrix(world.Rank), MatrixProduct),
            Texts: world.Scan([Data.Text(world.Rank)], Operation<string>.Add)));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal((Data.TextUpTo(rank), Data.Fold(rank + 1, Data.Matrix, Matrix2.Multiply)), (results[rank].Text, results[rank].Matrix));
            Assert.Equal([Data.TextUpTo(rank)], results[rank].Texts);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ExclusiveScan_MatrixProduct_RankRGetsRanksZeroToRMinusOneInOrder(int size)
    {
        // Act
        var results = Run(size, world => world.ExclusiveScan(Data.Matrix(world.Rank), MatrixProduct));

        // Assert
        Assert.Equal(default, results[0]);
        for (int rank = 1; rank < size; rank++) Assert.Equal(Data.Fold(rank, Data.Matrix, Matrix2.Multiply), results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ReduceScatter_StringConcatenation_EachBlockHoldsRanksInOrder(int size)
    {
        // Arrange: two elements per rank; element k of rank r is "r" (the first) or ",r".
        var counts = Enumerable.Repeat(2, size).ToArray();

        // Act
        var results = Run(size, world =>
            world.ReduceScatter(Enumerable.Range(0, 2 * size).Select(k => Data.Text(world.Rank)).ToArray(), Operation<string>.Add, counts));

        // Assert
        Assert.All(results, result => Assert.Equal([Data.TextUpTo(size - 1), Data.TextUpTo(size - 1)], result));
    }

    [Theory]
    [InlineData(5)]
    [InlineData(6)]
    [InlineData(11)]
    [InlineData(16)]
    public void Reductions_SizesOutsideTheStandardSet_KeepRankOrder(int size)
    {
        // Act: other remainders of the recursive-doubling fold (size minus the largest power of two below it).
        var results = Run(size, world => (
            Reduced: world.Reduce(Data.Text(world.Rank), Operation<string>.Add, size - 1),
            All: world.Allreduce(Data.Matrix(world.Rank), MatrixProduct),
            Prefix: world.Scan(Data.Text(world.Rank), Operation<string>.Add),
            Exclusive: world.ExclusiveScan(Data.Matrix(world.Rank), MatrixProduct)));

        // Assert
        Assert.Equal(Data.TextUpTo(size - 1), results[size - 1].Reduced);
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(Data.Fold(size, Data.Matrix, Matrix2.Multiply), results[rank].All);
            Assert.Equal(Data.TextUpTo(rank), results[rank].Prefix);
            Assert.Equal(rank == 0 ? default : Data.Fold(rank, Data.Matrix, Matrix2.Multiply), results[rank].Exclusive);
        }
    }

    [Fact]
    public void MatrixProduct_ReversedOrder_DiffersSoTheseTestsSeeReordering()
    {
        // Act
        var forward = Data.Fold(3, Data.Matrix, Matrix2.Multiply);
        var backward = Data.Fold(3, r => Data.Matrix(2 - r), Matrix2.Multiply);

        // Assert
        Assert.NotEqual(forward, backward);
    }
}
