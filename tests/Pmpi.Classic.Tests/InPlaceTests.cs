namespace Pmpi.Classic.Tests;

/// <summary>MPI_IN_PLACE as the send buffer of MPI_Allreduce, MPI_Reduce at the root and MPI_Allgather.</summary>
public sealed class InPlaceTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Allreduce_InPlace_BufferHoldsTheSumAndItsTailIsUntouched()
    {
        var results = new int[3][];
        var values = new double[3];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] buffer = [rank, 10 * rank, 99];
            MPI_Allreduce(MPI_IN_PLACE, buffer, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            results[rank] = buffer;
            double x = rank + 1;
            MPI_Allreduce(MPI_IN_PLACE, ref x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            values[rank] = x;
        }, Bounded);

        Assert.All(results, r => Assert.Equal([3, 30, 99], r));
        Assert.All(values, v => Assert.Equal(3.0, v));
    }

    [Fact]
    public void MPI_Reduce_InPlaceAtRoot_RootsBufferIsInputAndResult()
    {
        var atRoot = Array.Empty<long>();
        long product = 0;
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            long[] mine = [rank + 1, 2];
            long x = rank + 1, none = 0;
            if (rank == 1)
            {
                MPI_Reduce(MPI_IN_PLACE, mine, 2, MPI_LONG, MPI_SUM, 1, MPI_COMM_WORLD);
                MPI_Reduce(MPI_IN_PLACE, ref x, 1, MPI_LONG, MPI_PROD, 1, MPI_COMM_WORLD);
                (atRoot, product) = (mine, x);
            }
            else
            {
                MPI_Reduce(mine, null, 2, MPI_LONG, MPI_SUM, 1, MPI_COMM_WORLD);
                MPI_Reduce(ref x, ref none, 1, MPI_LONG, MPI_PROD, 1, MPI_COMM_WORLD);
            }
        }, Bounded);

        Assert.Equal([10L, 8], atRoot);
        Assert.Equal(24, product);
    }

    [Fact]
    public void MPI_Reduce_InPlaceOffTheRoot_ThrowsInvalidArgument()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(2, _ =>
        {
            int[] buffer = [1];
            MPI_Reduce(MPI_IN_PLACE, buffer, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Reduce: MPI_IN_PLACE is the root's send buffer only; rank 1 is not the root (0)", error.Message);
    }

    [Fact]
    public void MPI_Allgather_InPlace_EachRanksBlockIsAlreadyInItsSlot()
    {
        var results = new float[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var all = new float[6];
            (all[2 * rank], all[2 * rank + 1]) = (rank, rank + 0.5f);
            MPI_Allgather(MPI_IN_PLACE, 0, null, all, 2, MPI_FLOAT, MPI_COMM_WORLD);
            results[rank] = all;
        }, Bounded);

        Assert.All(results, r => Assert.Equal([0f, 0.5f, 1f, 1.5f, 2f, 2.5f], r));
    }
}
