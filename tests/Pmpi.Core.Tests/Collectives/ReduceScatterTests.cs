namespace Pmpi.Tests.Collectives;

public abstract class ReduceScatterTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ReduceScatter_VariableCountsIncludingZero_RankIGetsItsBlockOfTheSum(int size)
    {
        // Arrange: element k of rank r is r + k, so element k of the sum is size * k + the sum of the ranks.
        var counts = Enumerable.Range(0, size).Select(r => Data.Count(r + 1)).ToArray();
        int total = counts.Sum(), rankSum = size * (size - 1) / 2;
        var offsets = counts.Select((_, i) => counts.Take(i).Sum()).ToArray();

        // Act
        var results = Run(size, world => (
            Ints: world.ReduceScatter(Enumerable.Range(world.Rank, total).ToArray(), Operation<int>.Add, counts),
            Doubles: world.ReduceScatter(Enumerable.Range(world.Rank, total).Select(v => v / 4.0).ToArray(), Operation<double>.Add, counts),
            Vectors: world.ReduceScatter(Enumerable.Range(world.Rank, total).Select(v => new Vector2D(v, 1)).ToArray(), Operation<Vector2D>.Add, counts)));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var block = Enumerable.Range(offsets[rank], counts[rank]).Select(k => size * k + rankSum).ToArray();
            Assert.Equal(block, results[rank].Ints);
            Assert.Equal(block.Select(v => v / 4.0), results[rank].Doubles);
            Assert.Equal(block.Select(v => new Vector2D(v, size)), results[rank].Vectors);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ReduceScatter_OneElementPerRankWithMax_RankIGetsMaxOfElementI(int size)
    {
        // Arrange
        var counts = Enumerable.Repeat(1, size).ToArray();

        // Act: rank r's element i is (r * 7 + i * 3) % size.
        var results = Run(size, world =>
            world.ReduceScatter(Enumerable.Range(0, size).Select(i => (world.Rank * 7 + i * 3) % size).ToArray(), Operation<int>.Max, counts));

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            int i = rank;
            Assert.Equal([Enumerable.Range(0, size).Max(r => (r * 7 + i * 3) % size)], results[rank]);
        }
    }
}
