namespace Pmpi.Tests.Communicators;

/// <summary>Collectives on a split communicator use its ranks and order, not world's.</summary>
public abstract class SubCommunicatorCollectiveTests(Device device) : DeviceSuite(device)
{
    public static TheoryData<int, bool> SizesAndOrders
    {
        get
        {
            var data = new TheoryData<int, bool>();
            foreach (var size in new[] { 1, 2, 3, 4, 7, 8 })
                foreach (var reversed in new[] { false, true }) data.Add(size, reversed);
            return data;
        }
    }

    [Theory]
    [MemberData(nameof(SizesAndOrders))]
    public void Collectives_OnParityHalves_FollowTheHalvesRankOrder(int size, bool reversed)
    {
        // Act: world ranks of each half, ordered by world rank or its reverse.
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, reversed ? -world.Rank : world.Rank)!;
            int last = half.Size - 1;
            half.Barrier();
            int fromLast = half.Rank == last ? world.Rank : -1;
            half.Broadcast(ref fromLast, last);
            return new
            {
                Members = half.Allgather(world.Rank),
                FromLast = fromLast,
                Gathered = half.Gather($"{world.Rank}", last),
                Scattered = half.Scatter(half.Rank == 0 ? Enumerable.Range(0, half.Size).Select(r => r * 10).ToArray() : null, 0),
                Concatenated = half.Allreduce($"{world.Rank};", Operation<string>.Add),
                Reduced = half.Reduce($"{world.Rank};", Operation<string>.Add, last),
                Prefix = half.Scan($"{world.Rank};", Operation<string>.Add),
                Exchanged = half.Alltoall(Enumerable.Range(0, half.Size).Select(d => world.Rank * 100 + d).ToArray()),
                Scattered2 = half.ReduceScatter(Enumerable.Repeat(world.Rank, half.Size).ToArray(), Operation<int>.Add, [.. Enumerable.Repeat(1, half.Size)]),
                half.Rank,
            };
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var members = Enumerable.Range(0, size).Where(r => r % 2 == rank % 2).ToArray();
            if (reversed) Array.Reverse(members);
            int local = Array.IndexOf(members, rank), last = members.Length - 1;
            string ordered = string.Concat(members.Select(r => $"{r};"));
            var result = results[rank];
            Assert.Equal(local, result.Rank);
            Assert.Equal(members, result.Members);
            Assert.Equal(members[last], result.FromLast);
            if (local == last)
            {
                Assert.Equal(members.Select(r => $"{r}"), result.Gathered);
                Assert.Equal(ordered, result.Reduced);
            }
            else
            {
                Assert.Null(result.Gathered);
                Assert.Null(result.Reduced);
            }
            Assert.Equal(local * 10, result.Scattered);
            Assert.Equal(ordered, result.Concatenated);
            Assert.Equal(string.Concat(members.Take(local + 1).Select(r => $"{r};")), result.Prefix);
            Assert.Equal(members.Select(r => r * 100 + local), result.Exchanged);
            Assert.Equal([members.Sum()], result.Scattered2);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Collectives_OnHalvesAndWorldInterleaved_DoNotInterfere(int size)
    {
        // Act: the halves and world alternate collectives of the same kinds and types.
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, world.Rank)!;
            int halfSum = half.Allreduce(world.Rank, Operation<int>.Add);
            int worldSum = world.Allreduce(world.Rank, Operation<int>.Add);
            var halfMembers = half.Allgather(world.Rank);
            var worldMembers = world.Allgather(world.Rank);
            var halfPrefix = half.Scan(1, Operation<int>.Add);
            var worldPrefix = world.Scan(1, Operation<int>.Add);
            return (halfSum, worldSum, halfMembers, worldMembers, halfPrefix, worldPrefix);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var members = Enumerable.Range(0, size).Where(r => r % 2 == rank % 2).ToArray();
            var result = results[rank];
            Assert.Equal(members.Sum(), result.halfSum);
            Assert.Equal(size * (size - 1) / 2, result.worldSum);
            Assert.Equal(members, result.halfMembers);
            Assert.Equal(Enumerable.Range(0, size), result.worldMembers);
            Assert.Equal(rank / 2 + 1, result.halfPrefix);
            Assert.Equal(rank + 1, result.worldPrefix);
        }
    }
}
