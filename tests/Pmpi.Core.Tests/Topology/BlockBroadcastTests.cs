using Pmpi.Collectives;
using Pmpi.Devices.InProcess;

namespace Pmpi.Tests.Topology;

/// <summary>
/// Broadcast by blocks (scatter down the binomial tree, then a ring), which a large array of a raw type takes
/// between nodes: every size from 3 ranks, powers of two and not, every root, lengths that do not divide evenly;
/// non-roots with an array of the root's length (filled in place), with none, and with one of another length; on a
/// node each, and on nodes of several ranks (where it runs among the node leaders).
/// </summary>
public sealed class BlockBroadcastTests
{
    // Past the threshold, and not a multiple of any size here, so blocks differ in length.
    private static readonly int Length = CollectiveOptions.Default.BlockBroadcastFrom / sizeof(double) + 1009;

    public static TheoryData<int, int> SizesAndRoots => new() { { 3, 0 }, { 3, 2 }, { 4, 1 }, { 5, 4 }, { 6, 3 }, { 7, 0 }, { 8, 5 }, { 9, 8 } };

    [Theory]
    [MemberData(nameof(SizesAndRoots))]
    public void Broadcast_LargeArrayOnANodeEach_EveryRankGetsTheRootsArray(int size, int root)
    {
        // Act
        var results = Run(Places(size, ranksPerNode: 1), world => BroadcastFrom(world, root));

        // Assert
        AssertEveryRankHasTheRootsArray(results, root);
    }

    [Theory]
    [InlineData(7, 6, 2)]
    [InlineData(8, 1, 2)]
    [InlineData(9, 4, 3)]
    public void Broadcast_LargeArrayOnNodesOfSeveralRanks_EveryRankGetsTheRootsArray(int size, int root, int ranksPerNode)
    {
        var results = Run(Places(size, ranksPerNode), world => BroadcastFrom(world, root));

        AssertEveryRankHasTheRootsArray(results, root);
    }

    /// <summary>
    /// The single-value form with an array for its type (F#'s Mpi.broadcast, a generic caller) beside the array form:
    /// every rank takes the root's algorithm (a non-root that took the single-value one waited forever for blocks).
    /// </summary>
    [Theory]
    [InlineData(6, 0)]
    [InlineData(6, 3)]
    public void Broadcast_SingleValueFormOfAnArrayBesideTheArrayForm_EveryRankGetsTheRootsArray(int size, int root)
    {
        // Three nodes of two: among their leaders (0, 2, 4) the array goes by blocks from rank 0, which takes the array
        // form; the other leaders take the single-value form.
        var results = Run(Places(size, ranksPerNode: 2), world =>
        {
            if (world.Rank is not (2 or 4)) return BroadcastFrom(world, root);
            var values = world.Rank == root ? RootValues() : null!;
            var before = values;
            BroadcastAsValue(world, ref values, root);
            return (before, values);
        });

        AssertEveryRankHasTheRootsArray(results, root);

        static void BroadcastAsValue<T>(Intracommunicator world, ref T value, int root) => world.Broadcast(ref value, root);
    }

    [Fact]
    public void Broadcast_CalledWhileTheParentIsInABarrier_FailsNamingTheOtherCollective()
    {
        // Rank 1 broadcasts from rank 0, whose Barrier sends it a message of another collective first.
        var error = Assert.ThrowsAny<Exception>(() => Run(Places(3, ranksPerNode: 1), world =>
        {
            if (world.Rank == 1) BroadcastFrom(world, 0);
            else world.Barrier();
            return 0;
        }));

        Assert.Contains("rank 0 sent Barrier where rank 1, this rank, awaits Broadcast from root 0", error.ToString());
    }

    /// <summary>Rank r's array before the broadcast: the root's values; rank r % 3 == 1 none; r % 3 == 2 a shorter one.</summary>
    private static (double[] Before, double[] After) BroadcastFrom(Intracommunicator world, int root)
    {
        var values = world.Rank == root ? RootValues()
            : (world.Rank % 3) switch { 0 => new double[Length], 1 => null!, _ => new double[7] };
        var before = values;
        world.Broadcast(ref values, root);
        return (before, values);
    }

    private static void AssertEveryRankHasTheRootsArray((double[] Before, double[] After)[] results, int root)
    {
        var expected = RootValues();
        for (int rank = 0; rank < results.Length; rank++)
        {
            var (before, after) = results[rank];
            Assert.Equal(expected, after);
            if (before?.Length == Length) Assert.Same(before, after); // filled in place
        }
        Assert.Same(results[root].Before, results[root].After);
    }

    private static double[] RootValues() => [.. Enumerable.Range(0, Length).Select(i => i * 0.5 - 17)];

    private static (string Node, string Domain)[] Places(int size, int ranksPerNode) =>
        [.. Enumerable.Range(0, size).Select(rank => ($"node{rank / ranksPerNode}", ""))];

    private static T[] Run<T>((string Node, string Domain)[] places, Func<Intracommunicator, T> body)
    {
        var results = new T[places.Length];
        using var job = new InProcessJob(places.Length, places);
        Environment.Run(job, world => { results[world.Rank] = body(world); }, new EnvironmentOptions { Timeout = TestJob.Timeout });
        return results;
    }
}
