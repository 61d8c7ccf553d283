namespace Pmpi.Tests.Communicators;

/// <summary>Each communicator is its own matching context (MPI-4.1 §7.1.2): equal tags and sources never cross.</summary>
public abstract class ContextIsolationTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Receive_SameTagAndSourceOnWorldAndDup_EachGetsItsOwnMessage(int size)
    {
        // Act: send on world then on the dup; receive on the dup first.
        var results = Run(size, world =>
        {
            var dup = world.Dup();
            int right = (world.Rank + 1) % size, left = (world.Rank - 1 + size) % size;
            world.Send($"world {world.Rank}", right, 5);
            dup.Send($"dup {world.Rank}", right, 5);
            var fromDup = dup.Receive<string>(left, 5);
            var fromWorld = world.Receive<string>(left, 5);
            return (fromDup, fromWorld);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
            Assert.Equal(($"dup {(rank - 1 + size) % size}", $"world {(rank - 1 + size) % size}"), results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Receive_SameTagAndSourceOnWorldAndSplit_EachGetsItsOwnMessage(int size)
    {
        // Act: a split with one color and keys in rank order has world's ranks, but not its context.
        var results = Run(size, world =>
        {
            var split = world.Split(0, world.Rank)!;
            int right = (world.Rank + 1) % size, left = (world.Rank - 1 + size) % size;
            world.Send(1000 + world.Rank, right, 9);
            split.Send(2000 + world.Rank, right, 9);
            var fromSplit = split.Receive<int>(left, 9);
            var fromWorld = world.Receive<int>(left, 9);
            return (fromSplit, fromWorld);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
            Assert.Equal((2000 + (rank - 1 + size) % size, 1000 + (rank - 1 + size) % size), results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Receive_AnySourceAnyTagOnDup_IgnoresEarlierWorldMessage(int size)
    {
        // Act: the world message is sent, and arrives, first; a wildcard receive on the dup must still skip it.
        var results = Run(size, world =>
        {
            var dup = world.Clone();
            world.Send(-1, 0, 1);
            world.Barrier();
            dup.Send(world.Rank, 0, 2);
            if (world.Rank != 0) return Array.Empty<int>();
            var fromDup = Enumerable.Range(0, size).Select(_ => dup.Receive<int>(Communicator.AnySource, Communicator.AnyTag)).Order().ToArray();
            var fromWorld = Enumerable.Range(0, size).Select(_ => world.Receive<int>(Communicator.AnySource, Communicator.AnyTag)).ToArray();
            return [.. fromDup, .. fromWorld];
        });

        // Assert
        Assert.Equal([.. Enumerable.Range(0, size), .. Enumerable.Repeat(-1, size)], results[0]);
    }

    [Theory]
    [MemberData(nameof(TestJob.SizesAndRoots), MemberType = typeof(TestJob))]
    public void Broadcast_PendingUserMessageWithCollectivesTag_IsNotConsumed(int size, int root)
    {
        // Act: the root first sends a user message with every small tag a collective might use, then broadcasts.
        var results = Run(size, world =>
        {
            if (world.Rank == root)
                for (int dest = 0; dest < size; dest++)
                    for (int tag = 0; tag < 16; tag++) world.Send(-tag, dest, tag);
            int value = world.Rank == root ? 42 : 0;
            world.Broadcast(ref value, root);
            var user = Enumerable.Range(0, 16).Select(tag => world.Receive<int>(root, tag)).ToArray();
            return (value, user);
        });

        // Assert
        Assert.All(results, result =>
        {
            Assert.Equal(42, result.value);
            Assert.Equal(Enumerable.Range(0, 16).Select(tag => -tag), result.user);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Broadcast_OnWorldAndDupFromDifferentRoots_EachCommunicatorGetsItsRootsValue(int size)
    {
        // Act: two broadcasts of the same type and shape, from different roots, on congruent communicators.
        var results = Run(size, world =>
        {
            var dup = world.Dup();
            int onWorld = world.Rank == 0 ? 111 : -1, onDup = world.Rank == size - 1 ? 222 : -1;
            world.Broadcast(ref onWorld, 0);
            dup.Broadcast(ref onDup, size - 1);
            return (onWorld, onDup);
        });

        // Assert
        Assert.All(results, result => Assert.Equal((111, 222), result));
    }
}
