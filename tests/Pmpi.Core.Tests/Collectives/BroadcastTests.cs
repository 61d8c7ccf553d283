namespace Pmpi.Tests.Collectives;

public abstract class BroadcastTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Broadcast_Values_EveryRankGetsTheRootsValues(int size, int root)
    {
        // Act: every rank starts with its own values; only the root's may survive.
        var results = Run(size, world =>
        {
            int number = Data.Int(world.Rank);
            double real = Data.Double(world.Rank);
            var vector = Data.Vector(world.Rank);
            string text = Data.Text(world.Rank);
            world.Broadcast(ref number, root);
            world.Broadcast(ref real, root);
            world.Broadcast(ref vector, root);
            world.Broadcast(ref text, root);
            return (number, real, vector, text);
        });

        // Assert
        Assert.All(results, result => Assert.Equal((Data.Int(root), Data.Double(root), Data.Vector(root), Data.Text(root)), result));
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Broadcast_ArrayOfRootsLength_FillsEachRanksArrayInPlace(int size, int root)
    {
        // Act
        var results = Run(size, world =>
        {
            var mine = Data.IntArray(world.Rank);
            var array = mine;
            world.Broadcast(ref array, root);
            return (Same: ReferenceEquals(mine, array), Values: array);
        });

        // Assert
        Assert.All(results, result =>
        {
            Assert.True(result.Same);
            Assert.Equal(Data.IntArray(root), result.Values);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Broadcast_ArraysNullOrOfOtherLength_ReplacedByRootsArray(int size, int root)
    {
        // Act: non-roots pass null doubles and too short structs and strings.
        var results = Run(size, world =>
        {
            bool isRoot = world.Rank == root;
            double[] reals = isRoot ? [1.5, -2.5, 1e300] : null!;
            Vector2D[] vectors = isRoot ? [Data.Vector(1), Data.Vector(2), Data.Vector(3)] : [default];
            string[] texts = isRoot ? Data.TextArray(root) : [];
            world.Broadcast(ref reals, root);
            world.Broadcast(ref vectors, root);
            world.Broadcast(ref texts, root);
            return (reals, vectors, texts);
        });

        // Assert
        Assert.All(results, result =>
        {
            Assert.Equal([1.5, -2.5, 1e300], result.reals);
            Assert.Equal([Data.Vector(1), Data.Vector(2), Data.Vector(3)], result.vectors);
            Assert.Equal(Data.TextArray(root), result.texts);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Broadcast_ArrayAboveEagerLimit_EveryRankGetsIt(int size)
    {
        // Arrange: 200,000 bytes go by rendezvous, which holds the sender until the receiver has copied.
        var expected = Enumerable.Range(0, 25_000).Select(i => i * 0.5).ToArray();

        // Act
        var results = Run(size, world =>
        {
            var array = world.Rank == size - 1 ? expected.ToArray() : new double[expected.Length];
            world.Broadcast(ref array, size - 1);
            return array;
        });

        // Assert
        Assert.All(results, result => Assert.Equal(expected, result));
    }
}
