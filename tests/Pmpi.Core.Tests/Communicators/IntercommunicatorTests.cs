namespace Pmpi.Tests.Communicators;

/// <summary>
/// Intercommunicators between the lower and upper halves of the world (1 + 2 ranks at size 3, 3 + 4 at size 7):
/// creation, point-to-point across, collectives between the groups (flattened forms and ReduceScatter included),
/// Merge, Clone, Split and Create.
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

    /// <summary>The root's group contributes nothing to a Reduce, so its ranks may pass null arrays (MPI.NET's IntercommunicatorTest).</summary>
    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void ReduceArray_RootGroupPassesNull_RootGetsTheOtherGroupsCombination(int size)
    {
        int half = size / 2;
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            int root = lower ? (inter.Rank == 0 ? Intercommunicator.Root : Intercommunicator.Null) : 0;
            return inter.Reduce(lower ? null! : new[] { world.Rank, 1 }, Operation<int>.Add, root);
        });

        var upper = Enumerable.Range(half, size - half).ToArray();
        Assert.Equal([upper.Sum(), upper.Length], results[0]!);
        Assert.All(results[1..], result => Assert.Null(result));
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

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void FlattenedForms_UnevenBlocks_MoveEachRanksBlockAcross(int size)
    {
        // Rank i of either group contributes or receives i + 1 elements; element e of world rank w's block is w * 100 + e.
        static int[] Block(int worldRank, int length) => Enumerable.Range(0, length).Select(e => worldRank * 100 + e).ToArray();
        static int[] Counts(int ranks) => Enumerable.Range(1, ranks).ToArray();
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            var mine = Block(world.Rank, inter.Rank + 1);
            // Rooted forms: the lower half's rank 0 is the root, the upper half sends or receives.
            int[] gathered = [-1], scattered = [-1];
            if (!lower) inter.GatherFlattened(mine, 0);
            else if (inter.Rank == 0) inter.GatherFlattened(Counts(inter.RemoteSize), ref gathered);
            else inter.GatherFlattened<int>();
            if (!lower) inter.ScatterFromFlattened(Counts(inter.Size), 0, ref scattered);
            else if (inter.Rank == 0) inter.ScatterFromFlattened(Enumerable.Range(0, Counts(inter.RemoteSize).Sum()).ToArray(), Counts(inter.RemoteSize));
            else inter.ScatterFromFlattened<int>();
            var allgathered = inter.AllgatherFlattened(mine, Counts(inter.RemoteSize));
            // To rank j of the other group: j + 1 copies of this rank's world rank; from rank i: Rank + 1 copies of its.
            var sent = Enumerable.Range(0, inter.RemoteSize).SelectMany(j => Enumerable.Repeat(world.Rank, j + 1)).ToArray();
            int[] exchanged = null!;
            inter.AlltoallFlattened(sent, Counts(inter.RemoteSize), Enumerable.Repeat(inter.Rank + 1, inter.RemoteSize).ToArray(), ref exchanged);
            return (lower, inter.Rank, gathered, scattered, allgathered, exchanged);
        });

        int half = size / 2;
        var lowerRanks = Enumerable.Range(0, half).ToArray();
        var upperRanks = Enumerable.Range(half, size - half).ToArray();
        int[] Flattened(int[] worldRanks) => worldRanks.SelectMany((w, i) => Block(w, i + 1)).ToArray();
        foreach (var r in results)
        {
            var remote = r.lower ? upperRanks : lowerRanks;
            Assert.Equal(r.lower && r.Rank == 0 ? Flattened(upperRanks) : [-1], r.gathered);
            // The root's array is 0, 1, 2, ...; rank i of the upper half gets the i + 1 elements after those of ranks below it.
            int start = r.Rank * (r.Rank + 1) / 2;
            Assert.Equal(r.lower ? [-1] : Enumerable.Range(start, r.Rank + 1), r.scattered);
            Assert.Equal(Flattened(remote), r.allgathered);
            Assert.Equal(remote.SelectMany(source => Enumerable.Repeat(source, r.Rank + 1)), r.exchanged);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void ReduceScatter_BetweenHalves_GivesEachRankItsBlockOfTheOtherGroupsSum(int size)
    {
        // Rank i of each group receives i + 1 elements, so a group's arrays are as long as the other group's counts add up to.
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            int length = inter.RemoteSize * (inter.RemoteSize + 1) / 2;
            var values = Enumerable.Range(0, length).Select(e => world.Rank * 1000 + e).ToArray();
            var counts = Enumerable.Range(1, inter.Size).ToArray();
            var block = inter.ReduceScatter(values, Operation<int>.Add, counts);
            int[] into = new int[inter.Rank + 1], kept = into;
            inter.ReduceScatter(values, Operation<int>.Max, counts, ref into);
            return (lower, inter.Rank, block, into, Same: ReferenceEquals(kept, into));
        });

        int half = size / 2;
        var lowerRanks = Enumerable.Range(0, half).ToArray();
        var upperRanks = Enumerable.Range(half, size - half).ToArray();
        foreach (var r in results)
        {
            var remote = r.lower ? upperRanks : lowerRanks;
            var elements = Enumerable.Range(r.Rank * (r.Rank + 1) / 2, r.Rank + 1);
            Assert.Equal(elements.Select(e => remote.Sum(w => w * 1000 + e)), r.block);
            Assert.Equal(elements.Select(e => remote.Max() * 1000 + e), r.into);
            Assert.True(r.Same, "The caller's array of the right length was replaced instead of filled.");
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Split_ByParityOfRank_PairsEachColorAcrossOrderedByKey(int size)
    {
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            // Color: parity of the rank in its half; the last rank of each half opts out; key: reverse rank order.
            int color = inter.Rank == inter.Size - 1 && inter.Size > 1 ? Intracommunicator.Undefined : inter.Rank % 2;
            using var part = inter.Split(color, -inter.Rank);
            if (part is null) return (lower, color, Null: true, Local: Array.Empty<int>(), Remote: Array.Empty<int>(), Sum: 0);
            // Across the new intercommunicator: every rank learns the other side's world ranks in their new order.
            return (lower, color, Null: false, Local: part.Group.TranslateRanks([.. Enumerable.Range(0, part.Size)], world.Group),
                Remote: part.Allgather(world.Rank), Sum: part.Allreduce(world.Rank, Operation<int>.Add));
        });

        int half = size / 2;
        int[] Part(int first, int count, int color) => Enumerable.Range(0, count)
            .Where(i => (count == 1 || i != count - 1) && i % 2 == color).OrderByDescending(i => i).Select(i => first + i).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            var r = results[rank];
            var local = r.lower ? Part(0, half, r.color) : Part(half, size - half, r.color);
            var remote = r.lower ? Part(half, size - half, r.color) : Part(0, half, r.color);
            bool expectNull = r.color == Intracommunicator.Undefined || remote.Length == 0;
            Assert.Equal(expectNull, r.Null);
            if (expectNull) continue;
            Assert.Equal(local, r.Local);
            Assert.Equal(remote, r.Remote);
            Assert.Equal(remote.Sum(), r.Sum);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Create_Subgroups_JoinsThemAndLeavesTheRestOut(int size)
    {
        var results = Run(size, world =>
        {
            using var inter = Halves(world, out bool lower);
            // The lower half keeps its even ranks, the upper half drops its rank 0.
            var local = inter.Group;
            var chosen = lower ? local.IncludeOnly(Enumerable.Range(0, inter.Size).Where(i => i % 2 == 0).ToArray()) : local.Exclude([0]);
            using var part = inter.Create(chosen);
            // An empty subgroup on one side leaves both sides without a communicator.
            using var none = inter.Create(lower ? Group.Empty : local);
            return (lower, Null: part is null, Remote: part?.Allgather(world.Rank), NoneIsNull: none is null);
        });

        int half = size / 2;
        var lowerChosen = Enumerable.Range(0, half).Where(i => i % 2 == 0).ToArray();
        var upperChosen = Enumerable.Range(half + 1, size - half - 1).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            var r = results[rank];
            bool chosen = r.lower ? lowerChosen.Contains(rank) : upperChosen.Contains(rank);
            Assert.Equal(!chosen, r.Null);
            if (chosen) Assert.Equal(r.lower ? upperChosen : lowerChosen, r.Remote);
            Assert.True(r.NoneIsNull);
        }
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
    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Spawn_RanksThatNoAgentLaunched_EveryRankGetsTheRootsSpawnErrorAndNoParent(int size)
    {
        // Ranks that are threads have no master to start ranks with; the root's error reaches every rank.
        var results = Run(size, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Spawn("Worker.dll", [], 2, root: world.Size - 1));
            return (error.ErrorClass, error.Message, Parent: world.Parent);
        });

        Assert.All(results, result =>
        {
            Assert.Equal(ErrorClass.Spawn, result.ErrorClass);
            Assert.Equal($"Spawn needs a rank launched by an agent (pmpi run); rank {size - 1} is a thread of an in-process job, a singleton or a rank that mpiexec or srun started, which has no master to start ranks.", result.Message);
            Assert.Null(result.Parent);
        });
    }

    private static Intercommunicator Halves(Intracommunicator world, out bool lower)
    {
        int half = world.Size / 2;
        lower = world.Rank < half;
        using var group = world.Split(lower ? 0 : 1, world.Rank)!;
        return new Intercommunicator(group, 0, world, lower ? half : 0, tag: 99);
    }
}
