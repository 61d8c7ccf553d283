namespace Pmpi.Classic.Tests;

/// <summary>C and Fortran MPI code ported line by line, run as in-process ranks.</summary>
public sealed class ClassicTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Reduce_PortOfCpi_ComputesPiOnRoot()
    {
        // Arrange / Act: cpi.c, the MPICH example, line for line.
        var pis = new double[4];
        Environment.Run(4, _ =>
        {
            string[] args = [];
            int n = 0, myid, numprocs;
            double mypi, pi = 0, h, sum, x;
            MPI_Init(ref args);
            MPI_Comm_size(MPI_COMM_WORLD, out numprocs);
            MPI_Comm_rank(MPI_COMM_WORLD, out myid);
            if (myid == 0) n = 10000;
            MPI_Bcast(ref n, 1, MPI_INT, 0, MPI_COMM_WORLD);
            h = 1.0 / n;
            sum = 0.0;
            for (int i = myid + 1; i <= n; i += numprocs)
            {
                x = h * (i - 0.5);
                sum += 4.0 / (1.0 + x * x);
            }
            mypi = h * sum;
            MPI_Reduce(ref mypi, ref pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            pis[myid] = pi;
            MPI_Finalize();
        }, Bounded);

        // Assert: only the root receives the sum.
        Assert.Equal(Math.PI, pis[0], 1e-8);
        Assert.Equal([0.0, 0.0, 0.0], pis[1..]);
    }

    [Fact]
    public void MPI_Send_FortranStyleCountBelowLength_ReceiverGetsPrefixAndCount()
    {
        var received = new int[5];
        int count = -1, source = -1, tag = -1;
        Environment.Run(2, world =>
        {
            if (world.Rank == 0)
            {
                int[] buffer = [10, 20, 30, 40, 50];
                MPI_Send(buffer, 3, MPI_INTEGER, 1, 17, MPI_COMM_WORLD);
            }
            else
            {
                var status = new MPI_Status();
                MPI_Recv(received, 5, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status);
                MPI_Get_count(status, MPI_INTEGER, out count);
                (source, tag) = (status.MPI_SOURCE, status.MPI_TAG);
            }
        }, Bounded);

        Assert.Equal([10, 20, 30, 0, 0], received);
        Assert.Equal((3, 0, 17), (count, source, tag));
    }

    [Fact]
    public void MPI_Recv_MessageLongerThanCount_ThrowsTruncate()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(2, world =>
        {
            var buffer = new double[4];
            if (world.Rank == 0) MPI_Send(buffer, 4, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD);
            else MPI_Recv(buffer, 2, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }, Bounded));

        Assert.Equal(ErrorClass.Truncate, ((MpiException)error.InnerException!).ErrorClass);
    }

    [Fact]
    public void MPI_Send_DatatypeNotTheBuffersType_ThrowsTypeMismatchNamingBoth()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            double[] buffer = [1.0];
            MPI_Send(buffer, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Send: the buffer holds Double but the datatype is MPI_INTEGER (Int32)", error.Message);
    }

    [Fact]
    public void MPI_Irecv_RingExchangeWithWaitall_EachGetsLeftNeighbour()
    {
        var fromLeft = new long[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            long[] mine = [rank, rank * 100], theirs = new long[3];
            var requests = new MPI_Request[2];
            MPI_Irecv(theirs, 2, MPI_LONG, (rank + size - 1) % size, 5, MPI_COMM_WORLD, out requests[0]);
            MPI_Isend(mine, 2, MPI_LONG, (rank + 1) % size, 5, MPI_COMM_WORLD, out requests[1]);
            MPI_Waitall(2, requests, null);
            fromLeft[rank] = theirs;
        }, Bounded);

        Assert.Equal([[2, 200, 0], [0, 0, 0], [1, 100, 0]], fromLeft);
    }

    [Fact]
    public void MPI_Allreduce_GatherAndScatter_ArraysMoveAsInC()
    {
        var maxima = new float[3][];
        var gathered = new int[6];
        var scattered = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            float[] values = [rank, -rank], max = new float[2];
            MPI_Allreduce(values, max, 2, MPI_REAL, MPI_MAX, MPI_COMM_WORLD);
            maxima[rank] = max;

            int[] pair = [rank, rank * rank];
            MPI_Gather(pair, 2, MPI_INT, rank == 0 ? gathered : null, 2, MPI_INT, 0, MPI_COMM_WORLD);

            int[] all = rank == 1 ? [7, 8, 9] : [], one = new int[1];
            MPI_Scatter(all, 1, MPI_INT, one, 1, MPI_INT, 1, MPI_COMM_WORLD);
            scattered[rank] = one;
            MPI_Barrier(MPI_COMM_WORLD);
        }, Bounded);

        Assert.All(maxima, m => Assert.Equal([2f, 0f], m));
        Assert.Equal([0, 0, 1, 1, 2, 4], gathered);
        Assert.Equal([[7], [8], [9]], scattered);
    }

    [Fact]
    public void MPI_Init_OutsideAJob_MakesAWorldOfOneUntilFinalize()
    {
        // A thread of its own, so the initialisation (and the finalization, which is final) stays with it.
        (bool Before, int Size, bool During, bool After) observed = default;
        var thread = new Thread(() =>
        {
            MPI_Initialized(out bool before);
            string[] args = ["input.dat"];
            MPI_Init(ref args);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            MPI_Initialized(out bool during);
            MPI_Finalize();
            MPI_Initialized(out bool after);
            observed = (before, size, during, after);
        });
        thread.Start();

        Assert.True(thread.Join(TimeSpan.FromSeconds(30)), "MPI_Init/MPI_Finalize did not return within 30 s.");
        Assert.Equal((false, 1, true, false), observed);
    }
}
