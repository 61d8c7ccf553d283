using Pmpi.Collectives;
using Pmpi.Devices.InProcess;
using Pmpi.Tests.Collectives;

namespace Pmpi.Tests.Topology;

/// <summary>
/// The topology-aware collectives (Barrier, Broadcast, Reduce, Allreduce, Gather, Allgather by node and domain) against the results
/// the flat algorithms give, on random placements of ranks on nodes and domains (ranks of one node need not be
/// consecutive), run in one process whose ranks are told where they run. Non-commutative reductions (string
/// concatenation, matrix products) climb the levels too and stay exact in rank order.
/// </summary>
public sealed class HierarchicalCollectivesTests
{
    /// <summary>Fixed seeds, so a failure replays; each is one placement, size and root.</summary>
    public static TheoryData<int> Seeds => [.. Enumerable.Range(1, 40)];

    [Theory]
    [MemberData(nameof(Seeds))]
    public void Collectives_RandomPlacement_SameResultsAsFlat(int seed)
    {
        // Arrange
        var random = new Random(seed);
        int size = random.Next(2, 11), root = random.Next(size);
        var places = RandomPlaces(random, size);
        var values = Enumerable.Range(0, size).Select(_ => (long)random.Next(-1000, 1000)).ToArray();
        var doubles = Enumerable.Range(0, size).Select(_ => random.NextDouble()).ToArray();

        // Act
        var results = Run(places, world =>
        {
            world.Barrier();
            long sum = world.Allreduce(values[world.Rank], Operation<long>.Add);
            long max = world.Allreduce(values[world.Rank], Operation<long>.Max);
            long[] elementwise = world.Allreduce([values[world.Rank], world.Rank], Operation<long>.ExclusiveOr);
            long reducedMin = world.Reduce(values[world.Rank], Operation<long>.Min, root);
            double doubleSum = world.Allreduce(doubles[world.Rank], Operation<double>.Add);
            var broadcast = world.Rank == root ? $"from {root}" : null;
            world.Broadcast(ref broadcast, root);
            int[] array = world.Rank == root ? [root, size, 7] : new int[3];
            world.Broadcast(ref array, root);
            string text = world.Allreduce(Data.Text(world.Rank), Operation<string>.Add);
            var matrix = world.Reduce(Data.Matrix(world.Rank), Matrix2.Multiply, root);
            var matrices = world.Allreduce([Data.Matrix(world.Rank), Data.Matrix(size - world.Rank)], Matrix2.Multiply);
            var gathered = world.Gather($"r{world.Rank}", root);
            var allgathered = world.Allgather(values[world.Rank]);
            world.Barrier();
            return (sum, max, elementwise, reducedMin, doubleSum, broadcast, array, text, matrix, gathered, allgathered, matrices);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var r = results[rank];
            Assert.Equal(values.Sum(), r.sum);
            Assert.Equal(values.Max(), r.max);
            Assert.Equal([values.Aggregate((a, b) => a ^ b), Enumerable.Range(0, size).Aggregate((a, b) => a ^ b)], r.elementwise);
            Assert.Equal(rank == root ? values.Min() : 0, r.reducedMin);
            Assert.Equal(results[0].doubleSum, r.doubleSum); // regrouped, but the same on every rank
            Assert.Equal(doubles.Sum(), r.doubleSum, 1e-12);
            Assert.Equal($"from {root}", r.broadcast);
            Assert.Equal([root, size, 7], r.array);
            Assert.Equal(Data.TextUpTo(size - 1), r.text);
            Assert.Equal(rank == root ? Data.Fold(size, Data.Matrix, Matrix2.Multiply) : default, r.matrix);
            Assert.Equal([Data.Fold(size, Data.Matrix, Matrix2.Multiply), Data.Fold(size, i => Data.Matrix(size - i), Matrix2.Multiply)], r.matrices);
            Assert.Equal(rank == root ? Enumerable.Range(0, size).Select(i => $"r{i}").ToArray() : null, r.gathered);
            Assert.Equal(values, r.allgathered);
        }
    }

    [Theory]
    [InlineData("4 nodes of 2 ranks, one domain", new[] { "n1", "n2", "n3", "n4", "n1", "n2", "n3", "n4" }, new[] { "", "", "", "", "", "", "", "" })]
    [InlineData("2 domains of 2 nodes of 2 ranks", new[] { "a1", "a1", "a2", "a2", "b1", "b1", "b2", "b2" }, new[] { "a", "a", "a", "a", "b", "b", "b", "b" })]
    [InlineData("5 nodes, one of 2 ranks", new[] { "n1", "n2", "n3", "n4", "n5", "n1" }, new[] { "d", "d", "d", "d", "d", "d" })]
    public void Allreduce_LongArraysAcrossNodes_EveryRankGetsTheSumAndKeepsItsInput(string what, string[] nodes, string[] domains)
    {
        // Arrange: past the by-blocks threshold, so node and domain leaders go by blocks; sums of small integers are exact in any grouping.
        int length = CollectiveOptions.Default.BlockAllreduceFrom / sizeof(double) + 5;
        double[] Input(int rank) => [.. Enumerable.Range(0, length).Select(i => (double)(rank * 3 + i % 1000))];

        // Act
        var results = Run([.. nodes.Zip(domains)], world =>
        {
            var input = Input(world.Rank);
            var sum = world.Allreduce(input, Operation<double>.Add);
            return (Sum: sum, InputKept: input.SequenceEqual(Input(world.Rank)));
        });

        // Assert
        var inputs = Enumerable.Range(0, nodes.Length).Select(Input).ToArray();
        var expected = Enumerable.Range(0, length).Select(i => inputs.Sum(input => input[i])).ToArray();
        Assert.All(results, r => Assert.Equal(expected, r.Sum));
        Assert.All(results, r => Assert.True(r.InputKept, what));
    }

    [Fact]
    public void Topology_TwoDomainsOfTwoNodesOfTwoRanks_OneLeaderPerNodeAndPerDomain()
    {
        // Arrange: ranks 0-3 in domain a (nodes a1: 0 2, a2: 1 3), ranks 4-7 in domain b (b1: 4 5, b2: 6 7).
        (string, string)[] places = [("a1", "a"), ("a2", "a"), ("a1", "a"), ("a2", "a"), ("b1", "b"), ("b1", "b"), ("b2", "b"), ("b2", "b")];

        // Act
        var levels = Run(places, world => world.Topology is { } topology
            ? (Node: topology.Node.Size, NodeLeaders: topology.NodeLeaders?.Size, DomainLeaders: topology.DomainLeaders?.Size,
               NodeLeader: topology.NodeLeaderOf(world.Rank), DomainLeader: topology.DomainLeaderOf(world.Rank))
            : throw new InvalidOperationException("no topology"));

        // Assert
        Assert.Equal([0, 1, 0, 1, 4, 4, 6, 6], levels.Select(l => l.NodeLeader));
        Assert.Equal([0, 0, 0, 0, 4, 4, 4, 4], levels.Select(l => l.DomainLeader));
        Assert.All(levels, l => Assert.Equal(2, l.Node));
        Assert.Equal([2, 2, null, null, 2, null, 2, null], levels.Select(l => l.NodeLeaders));
        Assert.Equal([2, null, null, null, 2, null, null, null], levels.Select(l => l.DomainLeaders));
    }

    [Theory]
    [InlineData("one node", new[] { "n", "n", "n" }, new[] { "", "", "" })]
    [InlineData("a node each, one domain", new[] { "n1", "n2", "n3" }, new[] { "d", "d", "d" })]
    [InlineData("a node each, a domain each", new[] { "n1", "n2", "n3" }, new[] { "a", "b", "c" })]
    public void Topology_NoLevelToGain_Flat(string what, string[] nodes, string[] domains)
    {
        var topologies = Run([.. nodes.Zip(domains)], world => world.Topology);

        Assert.True(topologies.All(t => t is null), what);
    }

    /// <summary>
    /// On random placements (ranks of a node not always consecutive), ranks that pass a predefined sum beside ranks that
    /// pass their own operation take the same levels, so they meet each other's tags and fail naming both; before,
    /// the sum's ranks climbed the levels and the others ran flat, and every rank waited on a different communicator.
    /// </summary>
    [Theory]
    [MemberData(nameof(MismatchSeeds))]
    public void Allreduce_PredefinedBesideUsersOperation_RandomPlacement_FailsNamingBoth(int seed)
    {
        var random = new Random(seed);
        int size = random.Next(3, 9);
        var places = RandomPlaces(random, size);
        bool[] predefined = [.. Enumerable.Range(0, size).Select(rank => rank == 0 || (rank != 1 && random.Next(2) == 0))];

        var error = Assert.ThrowsAny<Exception>(() => Run(places, world =>
            world.Allreduce(world.Rank + 1L, predefined[world.Rank] ? Operation<long>.Add : (a, b) => a + b + 1)));

        Assert.Contains("Ranks disagree in a collective", error.ToString());
    }

    public static TheoryData<int> MismatchSeeds => [.. Enumerable.Range(100, 12)];

    [Fact]
    public void IsCommutative_PredefinedOnPrimitivesOnly()
    {
        Assert.True(Operation<long>.IsCommutative(Operation<long>.Add));
        Assert.True(Operation<double>.IsCommutative(Operation<double>.Max));
        Assert.True(Operation<bool>.IsCommutative(Operation<bool>.LogicalXor));
        Assert.False(Operation<string>.IsCommutative(Operation<string>.Add));
        Assert.False(Operation<long>.IsCommutative((a, b) => a - b));
        Assert.False(Operation<decimal>.IsCommutative(Math.Max));
    }

    /// <summary>1-3 domains of 1-3 nodes each; every rank on a random one of those nodes.</summary>
    private static (string Node, string Domain)[] RandomPlaces(Random random, int size)
    {
        var nodes = Enumerable.Range(0, random.Next(1, 4))
            .SelectMany(domain => Enumerable.Range(0, random.Next(1, 4)).Select(node => ($"node{domain}.{node}", $"domain{domain}")))
            .ToArray();
        return [.. Enumerable.Range(0, size).Select(_ => nodes[random.Next(nodes.Length)])];
    }

    private static T[] Run<T>((string Node, string Domain)[] places, Func<Intracommunicator, T> body)
    {
        var results = new T[places.Length];
        using var job = new InProcessJob(places.Length, places);
        Environment.Run(job, world => { results[world.Rank] = body(world); }, new EnvironmentOptions { Timeout = TestJob.Timeout });
        return results;
    }
}
