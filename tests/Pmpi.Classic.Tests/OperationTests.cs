namespace Pmpi.Classic.Tests;

/// <summary>User operations from MPI_Op_create, combined in rank order.</summary>
public sealed class OperationTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    // Writing b's decimal digits after a's: associative but not commutative, so a result shows the order of the ranks.
    private static void Concatenate(long[] invec, long[] inoutvec, int len, MPI_Datatype datatype)
    {
        Assert.Equal(MPI_LONG, datatype);
        for (int i = 0; i < len; i++)
        {
            long shift = 1;
            while (shift <= inoutvec[i]) shift *= 10;
            inoutvec[i] = invec[i] * shift + inoutvec[i];
        }
    }

    [Fact]
    public void MPI_Op_create_NonCommutative_ReduceAllreduceAndScanCombineInRankOrder()
    {
        var reduced = new long[4][];
        var allreduced = new long[4];
        var scanned = new long[4];
        bool commute = true;
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Op_create<long>(Concatenate, false, out var op);
            long[] mine = [rank + 1, 9 - rank], result = new long[2];
            MPI_Reduce(mine, result, 2, MPI_LONG, op, 3, MPI_COMM_WORLD);
            reduced[rank] = result;
            long one = rank + 1, all = 0, prefix = 0;
            MPI_Allreduce(ref one, ref all, 1, MPI_LONG, op, MPI_COMM_WORLD);
            MPI_Scan(ref one, ref prefix, 1, MPI_LONG, op, MPI_COMM_WORLD);
            (allreduced[rank], scanned[rank]) = (all, prefix);
            MPI_Op_commutative(op, out bool flag);
            if (rank == 0) commute = flag;
            MPI_Op? freed = op;
            MPI_Op_free(ref freed);
            Assert.Null(freed);
        }, Bounded);

        Assert.Equal([1234L, 9876], reduced[3]);
        Assert.All(allreduced, a => Assert.Equal(1234, a));
        Assert.Equal([1L, 12, 123, 1234], scanned);
        Assert.False(commute);
    }

    [Fact]
    public void MPI_Op_create_AdditionByTheUser_StaysAUsersOperationBesideMpiSum()
    {
        // A function that sums is still the user's: its result is the user's, with the user's function called.
        var calls = new int[3];
        var results = new int[3];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Op_create<int>((invec, inoutvec, len, _) =>
            {
                Interlocked.Increment(ref calls[rank]);
                for (int i = 0; i < len; i++) inoutvec[i] = invec[i] + inoutvec[i];
            }, true, out var op);
            int[] mine = [rank + 1], sum = new int[1];
            MPI_Allreduce(mine, sum, 1, MPI_INT, op, MPI_COMM_WORLD);
            results[rank] = sum[0];
        }, Bounded);

        Assert.All(results, r => Assert.Equal(6, r));
        Assert.True(calls.Sum() >= 2, $"the user's function was called {calls.Sum()} times; combining 3 ranks takes at least 2.");
    }

    [Fact]
    public void MPI_Op_create_ForAnotherType_ThrowsTypeMismatchNamingTheCall()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Op_create<long>(Concatenate, false, out var op);
            double[] send = [1], recv = new double[1];
            MPI_Allreduce(send, recv, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Allreduce: the operation was created for Int64 but the buffer holds Double", error.Message);
    }

    [Fact]
    public void MPI_Op_free_Predefined_ThrowsAndAFreedOperationIsRefused()
    {
        var predefined = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Op? sum = MPI_SUM;
            MPI_Op_free(ref sum);
        }, Bounded));
        var freed = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Op_create<long>(Concatenate, false, out var op);
            MPI_Op? handle = op;
            MPI_Op_free(ref handle);
            long one = 1, result = 0;
            MPI_Reduce(ref one, ref result, 1, MPI_LONG, op, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Op_free: MPI_SUM is predefined and cannot be freed", predefined.Message);
        Assert.Contains("MPI_Reduce: the operation MPI_Op_create(Int64) was freed by MPI_Op_free", freed.Message);
    }
}
