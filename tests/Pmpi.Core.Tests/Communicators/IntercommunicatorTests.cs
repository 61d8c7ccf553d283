namespace Pmpi.Tests.Communicators;

/// <summary>
/// Intercommunicators between the lower and upper halves of the world (1 + 2 ranks at size 3, 3 + 4 at size 7):
/// creation, point-to-point across, collectives between the groups, Merge and Clone.
/// </summary>
public abstract class IntercommunicatorTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Constructor_TwoHalves_SizesGroupsAndPointToPointAcross(int size)
    {
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            // Each rank of the lower half sends to the rank of the same index in the upper half, if there is one.
            int received = -1;
            if (lower && inter.Rank < inter.RemoteSize) inter.Send(world.Rank, inter.Rank, 3);
            if (!lower && inter.Rank < inter.RemoteSize) received = inter.Receive<int>(inter.Rank, 3);
            return (lower, inter.Size, inter.RemoteSize, Remote: inter.RemoteGroup.Size, received);
        });

        int half = size / 2;
        for (int rank = 0; rank < size; rank++)
        {
            var r = results[rank];
            bool lower = rank < half;
            Assert.Equal(lower ? (half, size - half) : (size - half, half), (r.Size, r.RemoteSize));
            Assert.Equal(r.RemoteSize, r.Remote);
            if (!lower) Assert.Equal(rank - half < half ? rank - half : -1, r.received);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Collectives_BetweenHalves_DeliverTheOtherGroupsData(int size)
    {
        int half = size / 2;
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            inter.Barrier();
            // The lower half's rank 0 is the root of the rooted collectives; the upper half takes part.
            int root = lower ? (inter.Rank == 0 ? Intercommunicator.Root : Intercommunicator.Null) : 0;
            string text = lower && inter.Rank == 0 ? "from the root" : "";
            inter.Broadcast(ref text, root);
            int[] array = lower && inter.Rank == 0 ? [7, 8] : [];
            inter.Broadcast(ref array, root);
            var gathered = inter.Gather(world.Rank, root);
            long reduced = inter.Reduce((long)world.Rank, Operation<long>.Add, root);
            int scattered = -1;
            if (root == Intercommunicator.Root) inter.Scatter(Enumerable.Range(0, inter.RemoteSize).Select(i => i * 10).ToArray());
            else if (root == Intercommunicator.Null) inter.Scatter<int>();
            else scattered = inter.Scatter<int>(root);
            var allgathered = inter.Allgather(world.Rank);
            int allreduced = inter.Allreduce(world.Rank, Operation<int>.Add);
            var exchanged = inter.Alltoall(Enumerable.Range(0, inter.RemoteSize).Select(j => world.Rank * 100 + j).ToArray());
            return (lower, inter.Rank, text, array, gathered, reduced, scattered, allgathered, allreduced, exchanged);
        });

        var lowerRanks = Enumerable.Range(0, half).ToArray();
        var upperRanks = Enumerable.Range(half, size - half).ToArray();
        foreach (var r in results)
        {
            var remote = r.lower ? upperRanks : lowerRanks;
            Assert.Equal(remote, r.allgathered);
            Assert.Equal(remote.Sum(), r.allreduced);
            Assert.Equal(remote.Select(source => source * 100 + r.Rank), r.exchanged);
            if (!r.lower)
            {
                Assert.Equal("from the root", r.text);
                Assert.Equal([7, 8], r.array);
                Assert.Equal(r.Rank * 10, r.scattered);
            }
            bool isRoot = r.lower && r.Rank == 0;
            Assert.Equal(isRoot ? upperRanks : null, r.gathered);
            Assert.Equal(isRoot ? upperRanks.Sum() : 0, r.reduced);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void ArrayAndOutputForms_BetweenHalves_CombineTheOtherGroupsArrays(int size)
    {
        int half = size / 2;
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            int root = lower ? (inter.Rank == 0 ? Intercommunicator.Root : Intercommunicator.Null) : 0;
            int[] gathered = [-1], reduced = [-1], allgathered = null!, allreduced = new int[2], exchanged = null!;
            inter.Gather(world.Rank, root, ref gathered);
            inter.Reduce(new[] { world.Rank, 1 }, Operation<int>.Add, root, ref reduced);
            inter.Allgather(world.Rank, ref allgathered);
            var kept = allreduced;
            inter.Allreduce(new[] { world.Rank, 1 }, Operation<int>.Add, ref allreduced);
            inter.Alltoall(Enumerable.Range(0, inter.RemoteSize).Select(j => world.Rank * 100 + j).ToArray(), ref exchanged);
            return (lower, inter.Rank, gathered, reduced, allgathered, allreduced, Same: ReferenceEquals(kept, allreduced), exchanged);
        });

        var lowerRanks = Enumerable.Range(0, half).ToArray();
        var upperRanks = Enumerable.Range(half, size - half).ToArray();
        foreach (var r in results)
        {
            var remote = r.lower ? upperRanks : lowerRanks;
            bool isRoot = r.lower && r.Rank == 0;
            Assert.Equal(isRoot ? upperRanks : [-1], r.gathered);
            Assert.Equal(isRoot ? [upperRanks.Sum(), upperRanks.Length] : [-1], r.reduced);
            Assert.Equal(remote, r.allgathered);
            Assert.Equal([remote.Sum(), remote.Length], r.allreduced);
            Assert.True(r.Same, "The caller's array of the right length was replaced instead of filled.");
            Assert.Equal(remote.Select(source => source * 100 + r.Rank), r.exchanged);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Merge_UpperHalfFirst_OrdersByTheFlagAndWorksAsOneCommunicator(int size)
    {
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            using var merged = inter.Merge(upper: lower); // the lower half asks to go second
            using var clone = inter.Clone();
            return (merged.Size, Members: merged.Allgather(world.Rank), Sum: merged.Allreduce(1, Operation<int>.Add),
                CloneRemote: clone.RemoteSize == inter.RemoteSize, Compared: clone.Compare(inter));
        });

        int half = size / 2;
        var expected = Enumerable.Range(half, size - half).Concat(Enumerable.Range(0, half));
        Assert.All(results, r =>
        {
            Assert.Equal(size, r.Size);
            Assert.Equal(expected, r.Members);
            Assert.Equal(size, r.Sum);
            Assert.True(r.CloneRemote);
            Assert.Equal(Comparison.Congruent, r.Compared);
        });
    }

    [Fact]
    public void Constructor_OverlappingGroups_ThrowsNamingTheSharedRank()
    {
        var error = Assert.Throws<MpiException>(() => Run(2, world =>
        {
            // Both "groups" are the whole world: the leaders are world ranks 0 and 1 of the same group.
            using var inter = new Intercommunicator(world, world.Rank == 0 ? 0 : 1, world, world.Rank == 0 ? 1 : 0, 9);
        }));

        Assert.Contains("is in both groups", error.ToString());
    }

    /// <summary>The intercommunicator between the world's lower half (ranks below size / 2) and upper half.</summary>
    private static Intercommunicator Halves(Intracommunicator world, out bool lower)
    {
        int half = world.Size / 2;
        lower = world.Rank < half;
        using var group = world.Split(lower ? 0 : 1, world.Rank)!;
        return new Intercommunicator(group, 0, world, lower ? half : 0, tag: 99);
    }
}
