namespace Pmpi.Tests.Collectives;

/// <summary>MPI.NET's count forms of the flattened collectives.</summary>
public abstract class CountFormsTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AllgatherFlattened_WithCounts_ConcatenatesInRankOrder(int size)
    {
        var counts = Enumerable.Range(0, size).Select(r => r % 3).ToArray();
        var expected = Enumerable.Range(0, size).SelectMany(r => Enumerable.Repeat(r, counts[r])).ToArray();

        var results = Run(size, world => world.AllgatherFlattened(Enumerable.Repeat(world.Rank, counts[world.Rank]).ToArray(), counts));

        Assert.All(results, r => Assert.Equal(expected, r));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AllgatherFlattened_WithCount_ConcatenatesEqualBlocks(int size)
    {
        var results = Run(size, world => world.AllgatherFlattened(new[] { world.Rank, -world.Rank }, 2));

        Assert.All(results, r => Assert.Equal(Enumerable.Range(0, size).SelectMany(x => new[] { x, -x }), r));
    }

    [Fact]
    public void AllgatherFlattened_WrongOwnCount_ThrowsInvalidCount()
    {
        var error = Assert.Throws<MpiException>(() => Run(2, world => world.AllgatherFlattened(new[] { 1, 2, 3 }, 2)));

        Assert.Equal(ErrorClass.InvalidCount, Assert.IsType<MpiException>(error.InnerException).ErrorClass);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_WithCount_GivesEachRankItsBlock(int size, int root)
    {
        var data = Enumerable.Range(0, 2 * size).Select(i => (double)i).ToArray();

        var results = Run(size, world => world.ScatterFromFlattened(world.Rank == root ? data : null, 2, root));

        for (int rank = 0; rank < size; rank++) Assert.Equal([2.0 * rank, 2.0 * rank + 1], results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AlltoallFlattened_WithCount_ExchangesBlocks(int size)
    {
        var results = Run(size, world =>
            world.AlltoallFlattened(Enumerable.Range(0, size).SelectMany(dest => new[] { $"{world.Rank}>{dest}", "x" }).ToArray(), 2));

        for (int rank = 0; rank < size; rank++)
            Assert.Equal(Enumerable.Range(0, size).SelectMany(source => new[] { $"{source}>{rank}", "x" }), results[rank]);
    }
}
