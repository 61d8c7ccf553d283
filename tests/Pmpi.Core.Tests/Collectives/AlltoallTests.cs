namespace Pmpi.Tests.Collectives;

public abstract class AlltoallTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Alltoall_Values_RankIGetsElementIOfEveryRankInRankOrder(int size)
    {
        // Act: rank s sends s * 100 + d (and its text and vector forms) to rank d.
        var results = Run(size, world =>
        {
            var targets = Enumerable.Range(0, size).ToArray();
            return (
                Ints: world.Alltoall(targets.Select(d => world.Rank * 100 + d).ToArray()),
                Doubles: world.Alltoall(targets.Select(d => world.Rank + d / 8.0).ToArray()),
                Vectors: world.Alltoall(targets.Select(d => new Vector2D(world.Rank, d)).ToArray()),
                Texts: world.Alltoall(targets.Select(d => $"{world.Rank}->{d}").ToArray()),
                Arrays: world.Alltoall(targets.Select(d => Enumerable.Repeat(world.Rank, d).ToArray()).ToArray()));
        });

        // Assert
        var sources = Enumerable.Range(0, size).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            var result = results[rank];
            Assert.Equal(sources.Select(s => s * 100 + rank), result.Ints);
            Assert.Equal(sources.Select(s => s + rank / 8.0), result.Doubles);
            Assert.Equal(sources.Select(s => new Vector2D(s, rank)), result.Vectors);
            Assert.Equal(sources.Select(s => $"{s}->{rank}"), result.Texts);
            Assert.Equal(sources.Select(s => Enumerable.Repeat(s, rank).ToArray()), result.Arrays);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AlltoallFlattened_VariableCountsIncludingZero_BlocksArriveInRankOrder(int size)
    {
        // Arrange: rank s sends (s + 2d + 1) % 3 elements to rank d, so counts differ by direction and include zero.
        static int CountFrom(int source, int dest) => (source + 2 * dest + 1) % 3;
        static string Element(int source, int dest, int k) => $"{source}>{dest}#{k}";

        // Act
        var results = Run(size, world =>
        {
            var targets = Enumerable.Range(0, size).ToArray();
            var sendCounts = targets.Select(d => CountFrom(world.Rank, d)).ToArray();
            var receiveCounts = targets.Select(s => CountFrom(s, world.Rank)).ToArray();
            return (
                Texts: world.AlltoallFlattened(targets.SelectMany(d => Enumerable.Range(0, sendCounts[d]).Select(k => Element(world.Rank, d, k))).ToArray(), sendCounts, receiveCounts),
                Ints: world.AlltoallFlattened(targets.SelectMany(d => Enumerable.Range(0, sendCounts[d]).Select(k => world.Rank * 1000 + d * 10 + k)).ToArray(), sendCounts, receiveCounts));
        });

        // Assert
        var sources = Enumerable.Range(0, size).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(sources.SelectMany(s => Enumerable.Range(0, CountFrom(s, rank)).Select(k => Element(s, rank, k))), results[rank].Texts);
            Assert.Equal(sources.SelectMany(s => Enumerable.Range(0, CountFrom(s, rank)).Select(k => s * 1000 + rank * 10 + k)), results[rank].Ints);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AlltoallFlattened_BlocksAboveEagerLimit_BlocksArriveInRankOrder(int size)
    {
        // Arrange: 9,000 doubles (72 KB) per pair go by rendezvous in every step of the pairwise exchange.
        const int block = 9_000;
        var counts = Enumerable.Repeat(block, size).ToArray();

        // Act
        var results = Run(size, world =>
        {
            var values = Enumerable.Range(0, size * block).Select(i => world.Rank * 1e6 + i).ToArray();
            return world.AlltoallFlattened(values, counts, counts);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var expected = Enumerable.Range(0, size).SelectMany(s => Enumerable.Range(rank * block, block).Select(i => s * 1e6 + i));
            Assert.Equal(expected, results[rank]);
        }
    }
}
