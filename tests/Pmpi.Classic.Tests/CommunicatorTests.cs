namespace Pmpi.Classic.Tests;

/// <summary>MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create, MPI_Comm_free, MPI_Comm_compare and the groups MPI_Comm_create takes.</summary>
public sealed class CommunicatorTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Comm_split_EvenAndOddRanksReversedByKey_RanksAndSumsFollowTheParts()
    {
        var observed = new (int Rank, int Size, int Sum)[5];
        bool undefinedIsNull = false;
        Environment.Run(5, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, out var half);
            MPI_Comm_rank(half!, out int halfRank);
            MPI_Comm_size(half!, out int halfSize);
            int sum = 0;
            MPI_Allreduce(ref rank, ref sum, 1, MPI_INT, MPI_SUM, half!);
            observed[rank] = (halfRank, halfSize, sum);
            MPI_Comm_free(ref half);
            Assert.Equal(MPI_COMM_NULL, half);

            MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, 0, out var rest);
            if (rank == 0) undefinedIsNull = rest == MPI_COMM_NULL;
        }, Bounded);

        Assert.Equal([(2, 3, 6), (1, 2, 4), (1, 3, 6), (0, 2, 4), (0, 3, 6)], observed);
        Assert.True(undefinedIsNull);
    }

    [Fact]
    public void MPI_Comm_compare_DupSplitAndReorder_IdentCongruentSimilarUnequal()
    {
        var results = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_dup(MPI_COMM_WORLD, out var dup);
            MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, out var reversed);
            MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : 1, 0, out var part);
            MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, out int ident);
            MPI_Comm_compare(MPI_COMM_WORLD, dup, out int congruent);
            MPI_Comm_compare(MPI_COMM_WORLD, reversed!, out int similar);
            MPI_Comm_compare(MPI_COMM_WORLD, part!, out int unequal);
            results[rank] = [ident, congruent, similar, unequal];
        }, Bounded);

        Assert.All(results, r => Assert.Equal([MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL], r));
        Assert.Equal([0, 1, 2, 3], results[0]);
    }

    [Fact]
    public void MPI_Comm_dup_MessagesOnTheDuplicate_DoNotMatchReceivesOnTheOriginal()
    {
        (int FromDup, int FromWorld) observed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_dup(MPI_COMM_WORLD, out var dup);
            if (rank == 0)
            {
                int[] a = [1], b = [2];
                MPI_Send(a, 1, MPI_INT, 1, 0, dup);
                MPI_Send(b, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            }
            else
            {
                int[] world = new int[1], onDup = new int[1];
                MPI_Recv(world, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(onDup, 1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE);
                observed = (onDup[0], world[0]);
            }
        }, Bounded);

        Assert.Equal((1, 2), observed);
    }

    [Fact]
    public void MPI_Comm_free_World_ThrowsAndAFreedCommunicatorIsRefused()
    {
        var world = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            Intracommunicator? comm = MPI_COMM_WORLD;
            MPI_Comm_free(ref comm);
        }, Bounded));
        var freed = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Comm_dup(MPI_COMM_WORLD, out Intracommunicator? dup);
            var kept = dup!;
            MPI_Comm_free(ref dup);
            int[] one = [1];
            MPI_Send(one, 1, MPI_INT, 0, 0, kept);
        }, Bounded));

        Assert.Contains("MPI_Comm_free: MPI_COMM_WORLD cannot be freed", world.Message);
        Assert.Equal(ErrorClass.InvalidCommunicator, ((MpiException)freed.InnerException!).ErrorClass);
    }

    [Fact]
    public void MPI_Comm_create_GroupOfRanksThreeAndOne_RankedInTheGroupsOrderOthersGetCommNull()
    {
        var observed = new (int GroupRank, int CommRank, int Sum)[4];
        int excludedSize = 0;
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_group(MPI_COMM_WORLD, out var world);
            MPI_Group_incl(world, 2, [3, 1, 0], out var pair);
            MPI_Group_excl(world, 1, [2, 0], out var rest);
            MPI_Group_size(rest, out excludedSize);
            MPI_Group_rank(pair, out int groupRank);
            MPI_Comm_create(MPI_COMM_WORLD, pair, out var comm);
            Group? freed = pair;
            MPI_Group_free(ref freed);
            Assert.Equal(MPI_GROUP_NULL, freed);
            if (comm == MPI_COMM_NULL)
            {
                observed[rank] = (groupRank, MPI_UNDEFINED, 0);
                return;
            }
            MPI_Comm_rank(comm!, out int commRank);
            int sum = 0;
            MPI_Allreduce(ref rank, ref sum, 1, MPI_INT, MPI_SUM, comm!);
            observed[rank] = (groupRank, commRank, sum);
        }, Bounded);

        Assert.Equal(3, excludedSize);
        Assert.Equal([(MPI_UNDEFINED, MPI_UNDEFINED, 0), (1, 1, 4), (MPI_UNDEFINED, MPI_UNDEFINED, 0), (0, 0, 4)], observed);
    }
}
