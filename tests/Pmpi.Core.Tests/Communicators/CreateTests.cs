namespace Pmpi.Tests.Communicators;

public abstract class CreateTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Create_SubsetGroup_MembersGetCommunicatorInGroupOrderNonMembersNull(int size)
    {
        // Arrange: the even ranks, highest first.
        var members = Enumerable.Range(0, size).Where(r => r % 2 == 0).Reverse().ToArray();

        // Act
        var results = Run(size, world =>
        {
            var created = world.Create(world.Group.IncludeOnly(members));
            return created is null ? null : new { created.Size, created.Rank, Members = created.Allgather(world.Rank) };
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            if (rank % 2 == 1)
            {
                Assert.Null(results[rank]);
                continue;
            }
            var result = results[rank]!;
            Assert.Equal(members.Length, result.Size);
            Assert.Equal(Array.IndexOf(members, rank), result.Rank);
            Assert.Equal(members, result.Members);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Create_EmptyGroup_EveryRankGetsNull(int size)
    {
        // Act
        var results = Run(size, world => world.Create(Group.Empty));

        // Assert
        Assert.All(results, Assert.Null);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Create_WholeGroup_CongruentToWorld(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var created = world.Create(world.Group)!;
            return (created.Rank, world.Compare(created));
        });

        // Assert
        for (int rank = 0; rank < size; rank++) Assert.Equal((rank, Comparison.Congruent), results[rank]);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(8)]
    public void Create_GroupWithRanksOutsideCommunicator_ThrowsInvalidArgument(int size)
    {
        // Act: a part of world is asked for a communicator of all of world.
        var errors = Run(size, world =>
        {
            var part = world.Split(world.Rank % 2, world.Rank)!;
            return Assert.Throws<MpiException>(() => part.Create(world.Group));
        });

        // Assert
        Assert.All(errors, error =>
        {
            Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
            Assert.Contains("not in this communicator", error.Message);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Create_FromSplit_MembersOfTheSplitOnly(int size)
    {
        // Act: from the even half, keep its ranks 0 and 2 (world ranks 0 and 4) in reverse.
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, world.Rank)!;
            var chosen = Enumerable.Range(0, half.Size).Where(r => r % 2 == 0).Reverse().ToArray();
            var created = half.Create(half.Group.IncludeOnly(chosen));
            return created?.Allgather(world.Rank);
        });

        // Assert: in each half, local ranks 0, 2, ... are world ranks congruent to the parity mod 4.
        for (int rank = 0; rank < size; rank++)
        {
            var expected = Enumerable.Range(0, size).Where(r => r % 4 == rank % 2).Reverse().ToArray();
            if (rank % 4 < 2) Assert.Equal(expected, results[rank]);
            else Assert.Null(results[rank]);
        }
    }
}
