using System.Globalization;

namespace Pmpi.Tests.Communicators;

public abstract class GroupTests(Device device) : DeviceSuite(device)
{
    private const int Size = 8;

    [Fact]
    public void Union_TwoGroups_FirstsMembersThenTheRestOfSeconds()
    {
        // Act
        var results = InWorld(world =>
        {
            var (first, second) = Pair(world);
            return (Union: WorldRanks(Group.Union(first, second), world), Operator: WorldRanks(first | second, world), Reversed: WorldRanks(second | first, world));
        });

        // Assert
        Assert.Equal([0, 1, 2, 3, 6, 5], results.Union);
        Assert.Equal([0, 1, 2, 3, 6, 5], results.Operator);
        Assert.Equal([6, 2, 5, 0, 1, 3], results.Reversed);
    }

    [Fact]
    public void Intersection_TwoGroups_CommonMembersInFirstsOrder()
    {
        // Act
        var results = InWorld(world =>
        {
            var (first, second) = Pair(world);
            return (Intersection: WorldRanks(Group.Intersection(first, second), world), Operator: WorldRanks(first & second, world), Reversed: WorldRanks(second & first, world));
        });

        // Assert
        Assert.Equal([0, 2], results.Intersection);
        Assert.Equal([0, 2], results.Operator);
        Assert.Equal([2, 0], results.Reversed);
    }

    [Fact]
    public void Difference_TwoGroups_MembersOfFirstOnlyInOrder()
    {
        // Act
        var results = InWorld(world =>
        {
            var (first, second) = Pair(world);
            return (Difference: WorldRanks(Group.Difference(first, second), world), Operator: WorldRanks(first - second, world), Reversed: WorldRanks(second - first, world),
                Empty: (first - world.Group).Size);
        });

        // Assert
        Assert.Equal([1, 3], results.Difference);
        Assert.Equal([1, 3], results.Operator);
        Assert.Equal([6, 5], results.Reversed);
        Assert.Equal(0, results.Empty);
    }

    [Fact]
    public void GroupAlgebra_WithEmptyGroup_BehavesAsTheEmptySet()
    {
        // Act
        var results = InWorld(world =>
        {
            var (first, _) = Pair(world);
            return (Union: WorldRanks(Group.Empty | first, world), Intersection: (first & Group.Empty).Size, Difference: WorldRanks(first - Group.Empty, world), Group.Empty.Size);
        });

        // Assert
        Assert.Equal([0, 1, 2, 3], results.Union);
        Assert.Equal(0, results.Intersection);
        Assert.Equal([0, 1, 2, 3], results.Difference);
        Assert.Equal(0, results.Size);
    }

    [Fact]
    public void IncludeOnly_Ranks_MembersInTheGivenOrder()
    {
        // Act
        var results = InWorld(world => (Chosen: WorldRanks(world.Group.IncludeOnly([5, 1, 3]), world), None: world.Group.IncludeOnly([]).Size));

        // Assert
        Assert.Equal([5, 1, 3], results.Chosen);
        Assert.Equal(0, results.None);
    }

    [Fact]
    public void Exclude_Ranks_RemainingMembersInOrder()
    {
        // Act
        var results = InWorld(world => (Excluded: WorldRanks(world.Group.Exclude([7, 0, 4]), world), Nothing: WorldRanks(world.Group.Exclude([]), world)));

        // Assert
        Assert.Equal([1, 2, 3, 5, 6], results.Excluded);
        Assert.Equal(Enumerable.Range(0, Size), results.Nothing);
    }

    [Fact]
    public void TranslateRanks_ToGroupLackingSome_GivesTheirRanksThereOrNoProcess()
    {
        // Act
        var results = InWorld(world =>
        {
            var odd = world.Group.IncludeOnly([7, 5, 3, 1]);
            return (WorldToOdd: world.Group.TranslateRanks([.. Enumerable.Range(0, Size)], odd), OddToWorld: odd.TranslateRanks([0, 1, 2, 3], world.Group),
                ToEmpty: odd.TranslateRanks([0], Group.Empty));
        });

        // Assert
        Assert.Equal([Group.NoProcess, 3, Group.NoProcess, 2, Group.NoProcess, 1, Group.NoProcess, 0], results.WorldToOdd);
        Assert.Equal([7, 5, 3, 1], results.OddToWorld);
        Assert.Equal([Group.NoProcess], results.ToEmpty);
    }

    [Fact]
    public void Compare_GroupsOfEachRelation_GiveThatRelation()
    {
        // Act
        var results = InWorld(world =>
        {
            var group = world.Group;
            var reversed = group.IncludeOnly([.. Enumerable.Range(0, Size).Reverse()]);
            var (first, second) = Pair(world);
            return new[]
            {
                group.Compare(world.Group), group.Compare(reversed.IncludeOnly([.. Enumerable.Range(0, Size).Reverse()])),
                group.Compare(reversed), first.Compare(first | second), first.Compare(second), Group.Empty.Compare(group.IncludeOnly([])),
            };
        });

        // Assert
        Assert.Equal([Comparison.Identical, Comparison.Identical, Comparison.Similar, Comparison.Unequal, Comparison.Unequal, Comparison.Identical], results);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Rank_OfCallingRank_ItsPositionOrNoProcess(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var reversed = world.Group.IncludeOnly([.. Enumerable.Range(0, size).Reverse()]);
            var withoutZero = world.Group.Exclude([0]);
            return (world.Group.Rank, Reversed: reversed.Rank, WithoutZero: withoutZero.Rank, Empty: Group.Empty.Rank);
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
            Assert.Equal((rank, size - 1 - rank, rank == 0 ? Group.NoProcess : rank - 1, Group.NoProcess), results[rank]);
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Group_OfSplit_TranslatesToTheWorldRanksOfThePart(int size)
    {
        // Act
        var results = Run(size, world =>
        {
            var half = world.Split(world.Rank % 2, -world.Rank)!;
            return (Size: half.Group.Size, Ranks: half.Group.TranslateRanks([.. Enumerable.Range(0, half.Size)], world.Group), Compare: half.Group.Compare(world.Group));
        });

        // Assert
        for (int rank = 0; rank < size; rank++)
        {
            var members = Enumerable.Range(0, size).Where(r => r % 2 == rank % 2).Reverse().ToArray();
            Assert.Equal(members.Length, results[rank].Size);
            Assert.Equal(members, results[rank].Ranks);
            Assert.Equal(size == 1 ? Comparison.Identical : Comparison.Unequal, results[rank].Compare);
        }
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(Size)]
    public void GroupOperations_RankOutsideGroup_ThrowInvalidRankNamingIt(int bad)
    {
        // Act
        var errors = InWorld(world => new[]
        {
            Assert.Throws<MpiException>(() => world.Group.IncludeOnly([0, bad])),
            Assert.Throws<MpiException>(() => world.Group.Exclude([bad])),
            Assert.Throws<MpiException>(() => world.Group.TranslateRanks([1, bad], world.Group)),
            Assert.Throws<MpiException>(() => world.Group.IncludeOnly([1, 2]).TranslateRanks([2], world.Group)),
        });

        // Assert
        Assert.All(errors, error => Assert.Equal(ErrorClass.InvalidRank, error.ErrorClass));
        Assert.All(errors[..3], error => Assert.Contains($"Rank {bad.ToString(CultureInfo.InvariantCulture)} ", error.Message));
        Assert.Contains("Rank 2 ", errors[3].Message);
    }

    [Fact]
    public void IncludeOnly_RankTwice_ThrowsInvalidRank()
    {
        // Act
        var error = InWorld(world => Assert.Throws<MpiException>(() => world.Group.IncludeOnly([3, 1, 3])));

        // Assert
        Assert.Equal(ErrorClass.InvalidRank, error.ErrorClass);
        Assert.Contains("twice", error.Message);
    }

    /// <summary>Runs <paramref name="body"/> on every rank of an 8-rank world; group algebra is local, so rank 0's answer stands for all.</summary>
    private T InWorld<T>(Func<Intracommunicator, T> body) => Run(Size, body)[0];

    /// <summary>Groups [0, 1, 2, 3] and [6, 2, 5, 0] of world ranks.</summary>
    private static (Group First, Group Second) Pair(Intracommunicator world) =>
        (world.Group.IncludeOnly([0, 1, 2, 3]), world.Group.IncludeOnly([6, 2, 5, 0]));

    private static int[] WorldRanks(Group group, Intracommunicator world) =>
        group.TranslateRanks([.. Enumerable.Range(0, group.Size)], world.Group);
}
