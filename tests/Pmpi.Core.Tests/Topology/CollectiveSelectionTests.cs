using Pmpi.Collectives;
using Pmpi.Devices.InProcess;
using Pmpi.Hosting;

namespace Pmpi.Tests.Topology;

/// <summary>
/// Each communicator chooses its collectives' algorithms once, as it is made (<see cref="CollectiveSelection"/>), from
/// its members and the options its rank started with (<see cref="CollectiveOptions"/>): on every constructor path, by
/// its own size and nodes; and ranks that started with other options still fail naming both choices.
/// </summary>
public sealed class CollectiveSelectionTests
{
    private static readonly CollectiveOptions Lowered = new() { BlockAllreduceFrom = 4096, BlockBroadcastFrom = 512 };

    [Fact]
    public void For_EveryConstructorPath_TakesTheOptionsTheRankStartedWith()
    {
        // Arrange: 8 ranks on a node each, so broadcasts by blocks apply too.
        (string, string)[] places = [.. Enumerable.Range(0, 8).Select(rank => ($"node{rank}", ""))];

        // Act
        var selections = Run(places, new EnvironmentOptions { Collectives = Lowered }, world =>
        {
            using var dup = world.Dup();
            using var half = world.Split(world.Rank / 4, world.Rank)!;
            using var created = world.Create(world.Group.IncludeOnly([0, 1, 2, 3, 4, 5]));
            using var grid = new CartesianCommunicator(world, 2, [2, 4], [false, false], reorder: false);
            using var inter = new Intercommunicator(half, 0, world, world.Rank < 4 ? 4 : 0, tag: 7);
            using var merged = inter.Merge(world.Rank >= 4);
            return new[] { world, dup, half, created, grid, merged }.Select(comm => comm?.Collectives).ToArray();
        });

        // Assert
        foreach (var selection in selections.SelectMany(s => s))
        {
            if (selection is null) continue; // ranks Create left out
            Assert.Equal(Lowered.BlockAllreduceFrom, selection.AllreduceByBlocksFrom);
            Assert.Equal(Lowered.BlockBroadcastFrom, selection.BroadcastByBlocksFrom);
            Assert.True(selection.SpansNodes);
        }
    }

    [Theory]
    [InlineData(1, false, false)]
    [InlineData(2, false, false)]
    [InlineData(3, false, true)]
    [InlineData(4, true, true)]
    public void For_BySize_BlocksFromTheRankMinimumsOn(int size, bool allreduceByBlocks, bool broadcastByBlocks)
    {
        var selections = Run([.. Enumerable.Range(0, size).Select(rank => ($"node{rank}", ""))], new EnvironmentOptions(), world => world.Collectives);

        Assert.All(selections, selection =>
        {
            Assert.Equal(allreduceByBlocks ? CollectiveOptions.Default.BlockAllreduceFrom : long.MaxValue, selection.AllreduceByBlocksFrom);
            Assert.Equal(broadcastByBlocks ? CollectiveOptions.Default.BlockBroadcastFrom : long.MaxValue, selection.BroadcastByBlocksFrom);
            Assert.Null(selection.Topology); // a node each, one domain: nothing to climb
        });
    }

    [Fact]
    public void For_OneNode_NeitherLevelsNorBroadcastByBlocks()
    {
        var selections = Run([.. Enumerable.Range(0, 4).Select(_ => ("node", ""))], new EnvironmentOptions(), world => world.Collectives);

        Assert.All(selections, selection =>
        {
            Assert.False(selection.SpansNodes);
            Assert.Null(selection.Topology);
            Assert.Equal(long.MaxValue, selection.BroadcastByBlocksFrom);
            Assert.Equal(CollectiveOptions.Default.BlockAllreduceFrom, selection.AllreduceByBlocksFrom);
        });
    }

    [Fact]
    public void For_NodesOfSeveralRanks_LevelsEachWithTheirOwnSelection()
    {
        // Arrange: 4 nodes of 2 ranks; the node leaders are 4 ranks on 4 nodes, each node 2 ranks on one.
        (string, string)[] places = [.. Enumerable.Range(0, 8).Select(rank => ($"node{rank / 2}", ""))];

        // Act
        var results = Run(places, new EnvironmentOptions { Collectives = Lowered }, world =>
            (World: world.Collectives, Node: world.Topology!.Node.Collectives, Leaders: world.Topology.NodeLeaders?.Collectives));

        // Assert
        Assert.All(results, r => Assert.NotNull(r.World.Topology));
        Assert.All(results, r => Assert.Equal(long.MaxValue, r.Node.AllreduceByBlocksFrom)); // 2 ranks
        Assert.All(results, r => Assert.False(r.Node.SpansNodes));
        var leaders = results.Where(r => r.Leaders is not null).Select(r => r.Leaders!).ToArray();
        Assert.Equal(4, leaders.Length);
        Assert.All(leaders, l => Assert.Equal(Lowered.BlockAllreduceFrom, l.AllreduceByBlocksFrom));
        Assert.All(leaders, l => Assert.Equal(Lowered.BlockBroadcastFrom, l.BroadcastByBlocksFrom));
    }

    [Fact]
    public void Allreduce_OptionsLowerTheThreshold_ShortArrayGoesByBlocksWithTheSameResult()
    {
        // Arrange: 1,000 doubles (8,000 bytes) over 4 ranks, past the lowered threshold and far below the default.
        const int length = 1000;

        // Act
        var results = Run([.. Enumerable.Range(0, 4).Select(_ => ("node", ""))], new EnvironmentOptions { Collectives = Lowered }, world =>
        {
            double[] values = [.. Enumerable.Range(0, length).Select(i => (double)(i + world.Rank))];
            return (ByBlocks: CollectiveAlgorithms.AllreduceGoesByBlocks(world, values), Sum: world.Allreduce(values, Operation<double>.Add));
        });

        // Assert
        Assert.All(results, r => Assert.True(r.ByBlocks));
        double[] expected = [.. Enumerable.Range(0, length).Select(i => 4.0 * i + 6)];
        Assert.All(results, r => Assert.Equal(expected, r.Sum));
    }

    /// <summary>
    /// Ranks whose runtimes started with other thresholds choose differently for one array; the tags carry each
    /// choice, so the job fails at once naming both rather than waiting.
    /// </summary>
    [Fact]
    public void Allreduce_RanksStartedWithOtherThresholds_FailsNamingBothChoices()
    {
        var error = Assert.ThrowsAny<Exception>(() => Run([.. Enumerable.Range(0, 4).Select(_ => ("node", ""))], new EnvironmentOptions(), world =>
        {
            // Ranks 2 and 3 start a runtime of their own over the same device, with the lowered thresholds.
            var options = world.Rank < 2 ? CollectiveOptions.Default : Lowered;
            var runtime = new RankRuntime(world.Runtime.Device, world.Runtime.Control, world.Runtime.Payloads, options);
            return runtime.World.Allreduce(new double[1000], Operation<double>.Add);
        }));

        Assert.Contains("Allreduce by blocks", error.ToString());
        Assert.Contains("Allreduce by whole values", error.ToString());
    }

    private static T[] Run<T>((string Node, string Domain)[] places, EnvironmentOptions options, Func<Intracommunicator, T> body)
    {
        var results = new T[places.Length];
        using var job = new InProcessJob(places.Length, places);
        Environment.Run(job, world => { results[world.Rank] = body(world); }, new EnvironmentOptions { Timeout = TestJob.Timeout, Collectives = options.Collectives });
        return results;
    }
}
