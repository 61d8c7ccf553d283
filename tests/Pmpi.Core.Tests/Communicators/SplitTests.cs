namespace Pmpi.Tests.Communicators;

public abstract class SplitTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_ByParity_EachPartHoldsRanksOfThatParityInOrder(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var part = world.Split(world.Rank % 2, world.Rank)!;
            return (part.Size, part.Rank, Members: part.Allgather(world.Rank));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var expected = Enumerable.Range(0, size).Where(r => r % 2 == rank % 2).ToArray();
            Assert.Equal(expected.Length, results[rank].Size);
            Assert.Equal(rank / 2, results[rank].Rank);
            Assert.Equal(expected, results[rank].Members);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_KeysDescending_NewRanksReverseOldOrder(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var reversed = world.Split(0, size - world.Rank)!;
            return (reversed.Rank, Members: reversed.Allgather(world.Rank));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(size - 1 - rank, results[rank].Rank);
            Assert.Equal(Enumerable.Range(0, size).Reverse(), results[rank].Members);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_EqualKeys_OrderedByOldRank(int size)
    {
        // Act: ranks 0..size/2 - 1 share key 1, the rest key 0, so the upper half comes first, each half in old order.
        var results = Run(size, world => world.Split(0, world.Rank < size / 2 ? 1 : 0)!.Allgather(world.Rank));

        // Assert
        int[] expected = [.. Enumerable.Range(size / 2, size - size / 2), .. Enumerable.Range(0, size / 2)];
        Assert.All(results, members => Assert.Equal(expected, members));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_UndefinedColor_ReturnsNullAndLeavesTheRankOut(int size)
    {
        // Act: every third rank, from 0, opts out.
        var results = Run(size, world =>
        {
            var part = world.Split(world.Rank % 3 == 0 ? Intracommunicator.Undefined : 7, world.Rank);
            return part is null ? null : part.Allgather(world.Rank);
        });

        // Assert
        var members = Enumerable.Range(0, size).Where(r => r % 3 != 0).ToArray();
        for (int rank = 0; rank < size; rank++)
        {
            if (rank % 3 == 0) Assert.Null(results[rank]);
            else Assert.Equal(members, results[rank]);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_NegativeColorOtherThanUndefined_ThrowsInvalidArgument(int size)
    {
        // Act
        var errors = Run(size, world => Assert.Throws<MpiException>(() => world.Split(-2, 0)));

        // Assert
        Assert.All(errors, error =>
        {
            Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
            Assert.Contains("-2", error.Message);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_Nested_InnerPartsAreSubsetsOfOuterParts(int size)
    {
        // Act: split by parity, then each half by its new rank's parity, in reverse order.
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, world.Rank)!;
            var quarter = half.Split(half.Rank % 2, -half.Rank)!;
            return (Half: half.Allgather(world.Rank), Quarter: quarter.Allgather(world.Rank), Sum: quarter.Allreduce(world.Rank, Operation<int>.Add));
        });

        // Assert: world rank r sits in the quarter of ranks congruent to r mod 4, highest first.
        for (int rank = 0; rank < size; rank++)
        {
            var quarter = Enumerable.Range(0, size).Where(r => r % 4 == rank % 4).Reverse().ToArray();
            Assert.Equal(Enumerable.Range(0, size).Where(r => r % 2 == rank % 2), results[rank].Half);
            Assert.Equal(quarter, results[rank].Quarter);
            Assert.Equal(quarter.Sum(), results[rank].Sum);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Split_Nested_PointToPointOnEachLevelStaysOnItsLevel(int size)
    {
        // Act: the same tag and the same (local) source 0 on three levels, received innermost first.
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, world.Rank)!;
            var quarter = half.Split(half.Rank % 2, half.Rank)!;
            var levels = new Intracommunicator[] { world, half, quarter };
            foreach (var (level, name) in levels.Zip(["world", "half", "quarter"]))
                if (level.Rank == 0) for (int dest = 0; dest < level.Size; dest++) level.Send($"{name} from {world.Rank}", dest, 3);
            return levels.Reverse().Select(level => level.Receive<string>(0, 3)).ToArray();
        });

        // Assert: rank 0 of a quarter is the lowest world rank congruent mod 4, of a half mod 2.
        for (int rank = 0; rank < size; rank++)
            Assert.Equal([$"quarter from {rank % 4}", $"half from {rank % 2}", "world from 0"], results[rank]);
    }
}
