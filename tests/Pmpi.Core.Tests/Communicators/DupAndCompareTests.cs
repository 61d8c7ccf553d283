namespace Pmpi.Tests.Communicators;

public abstract class DupAndCompareTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Dup_World_SameRanksCongruentAndUsable(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var dup = world.Dup();
            var clone = world.Clone();
            return (dup.Size, dup.Rank, CloneRank: clone.Rank, ToDup: world.Compare(dup), ToClone: world.Compare(clone), DupToClone: dup.Compare(clone),
                Sum: dup.Allreduce(world.Rank, Operation<int>.Add), Gathered: clone.Allgather(world.Rank));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var result = results[rank];
            Assert.Equal((size, rank, rank), (result.Size, result.Rank, result.CloneRank));
            Assert.Equal((Comparison.Congruent, Comparison.Congruent, Comparison.Congruent), (result.ToDup, result.ToClone, result.DupToClone));
            Assert.Equal(size * (size - 1) / 2, result.Sum);
            Assert.Equal(Enumerable.Range(0, size), result.Gathered);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Dup_OfSplit_KeepsTheSplitsOrder(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var reversed = world.Split(0, -world.Rank)!;
            var dup = reversed.Dup();
            return (dup.Rank, Comparison: reversed.Compare(dup), Members: dup.Allgather(world.Rank));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(size - 1 - rank, results[rank].Rank);
            Assert.Equal(Comparison.Congruent, results[rank].Comparison);
            Assert.Equal(Enumerable.Range(0, size).Reverse(), results[rank].Members);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Compare_CommunicatorsOfEachRelation_GiveThatRelation(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var inOrder = world.Split(0, world.Rank)!;
            var reversed = world.Split(0, -world.Rank)!;
            var byParity = world.Split(world.Rank % 2, world.Rank)!;
            return new[]
            {
                world.Compare(world), world.Compare(Communicator.World), inOrder.Compare(inOrder),
                world.Compare(inOrder), world.Compare(reversed), world.Compare(byParity), world.Compare(Communicator.Self),
            };
        });

        // Assert: with one rank every reordering and every part is the whole world again.
        var expected = new[]
        {
            Comparison.Identical, Comparison.Identical, Comparison.Identical, Comparison.Congruent,
            size == 1 ? Comparison.Congruent : Comparison.Similar,
            size == 1 ? Comparison.Congruent : Comparison.Unequal,
            size == 1 ? Comparison.Congruent : Comparison.Unequal,
        };
        Assert.All(results, result => Assert.Equal(expected, result));
    }
}
