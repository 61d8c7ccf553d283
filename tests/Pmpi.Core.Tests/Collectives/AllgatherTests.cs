namespace Pmpi.Tests.Collectives;

public abstract class AllgatherTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allgather_Values_EveryRankGetsAllValuesInRankOrder(int size)
    {
        // Act
        var results = Run(size, world => (
            Ints: world.Allgather(Data.Int(world.Rank)),
            Doubles: world.Allgather(Data.Double(world.Rank)),
            Vectors: world.Allgather(Data.Vector(world.Rank)),
            Texts: world.Allgather(Data.Text(world.Rank)),
            Arrays: world.Allgather(Data.IntArray(world.Rank, world.Rank))));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        Assert.All(results, result =>
        {
            Assert.Equal(ranks.Select(Data.Int), result.Ints);
            Assert.Equal(ranks.Select(Data.Double), result.Doubles);
            Assert.Equal(ranks.Select(Data.Vector), result.Vectors);
            Assert.Equal(ranks.Select(Data.Text), result.Texts);
            Assert.Equal(ranks.Select(r => Data.IntArray(r, r)), result.Arrays);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AllgatherFlattened_VariableLengthsIncludingZero_EveryRankGetsConcatenationInRankOrder(int size)
    {
        // Act
        var results = Run(size, world => (
            Ints: world.AllgatherFlattened(Data.IntArray(world.Rank, Data.Count(world.Rank))),
            Vectors: world.AllgatherFlattened(Enumerable.Repeat(Data.Vector(world.Rank), Data.Count(world.Rank)).ToArray()),
            Texts: world.AllgatherFlattened(Data.TextArray(world.Rank, Data.Count(world.Rank)))));

        // Assert
        var ranks = Enumerable.Range(0, size).ToArray();
        Assert.All(results, result =>
        {
            Assert.Equal(ranks.SelectMany(r => Data.IntArray(r, Data.Count(r))), result.Ints);
            Assert.Equal(ranks.SelectMany(r => Enumerable.Repeat(Data.Vector(r), Data.Count(r))), result.Vectors);
            Assert.Equal(ranks.SelectMany(r => Data.TextArray(r, Data.Count(r))), result.Texts);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AllgatherFlattened_BlocksAboveEagerLimit_EveryRankGetsAll(int size)
    {
        // Arrange: 10,000 doubles (80 KB) per rank travel the ring by rendezvous.
        const int block = 10_000;

        // Act
        var results = Run(size, world =>
            world.AllgatherFlattened(Enumerable.Range(world.Rank * block, block).Select(i => (double)i).ToArray()));

        // Assert
        var expected = Enumerable.Range(0, size * block).Select(i => (double)i).ToArray();
        Assert.All(results, result => Assert.Equal(expected, result));
    }
}
