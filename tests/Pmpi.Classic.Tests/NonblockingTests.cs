namespace Pmpi.Classic.Tests;

/// <summary>The MPI-3 nonblocking collectives: each gives what its blocking form gives, once a wait or test completes it.</summary>
public sealed class NonblockingTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Ibcast_AndIbarrier_CompletedByWait_BufferHoldsWhatMPI_BcastGives(int ranks)
    {
        var blocking = new int[ranks][];
        var nonblocking = new int[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int root = ranks - 1;
            // The whole buffer and a prefix of it, the rest left as it was.
            int[] Mine() => rank == root ? [1, 2, 3, 4] : [-rank, -rank, -rank, -rank];
            int[] whole = Mine(), prefix = Mine(), iwhole = Mine(), iprefix = Mine();
            MPI_Bcast(whole, 4, MPI_INT, root, MPI_COMM_WORLD);
            MPI_Bcast(prefix, 2, MPI_INT, root, MPI_COMM_WORLD);
            MPI_Ibcast(iwhole, 4, MPI_INT, root, MPI_COMM_WORLD, out var first);
            MPI_Ibcast(iprefix, 2, MPI_INT, root, MPI_COMM_WORLD, out var second);
            MPI_Ibarrier(MPI_COMM_WORLD, out var barrier);
            var status = new MPI_Status();
            MPI_Wait(first, status);
            MPI_Wait(second, MPI_STATUS_IGNORE);
            MPI_Wait(barrier, MPI_STATUS_IGNORE);
            MPI_Get_count(status, MPI_INT, out int count);
            Assert.Equal(0, count);
            (blocking[rank], nonblocking[rank]) = ([.. whole, .. prefix], [.. iwhole, .. iprefix]);
        }, Bounded);

        Assert.Equal(blocking, nonblocking);
        Assert.Equal([1, 2, 3, 4, 1, 2, ranks == 1 ? 3 : 0, ranks == 1 ? 4 : 0], nonblocking[0]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Ireduce_AndIallreduce_CompletedByWaitall_BuffersHoldWhatTheBlockingFormsGive(int ranks)
    {
        var blocking = new double[ranks][];
        var nonblocking = new double[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int root = ranks / 2;
            double[] send = [rank + 1, -rank, 99];
            double[] sum = [-1, -1, -1], max = [-1, -1, -1], inPlace = [rank + 1, -rank, 99], rootInPlace = [rank + 1, -rank, 99];
            double[] isum = [-1, -1, -1], imax = [-1, -1, -1], iinPlace = [rank + 1, -rank, 99], irootInPlace = [rank + 1, -rank, 99];
            MPI_Reduce(send, sum, 2, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
            MPI_Allreduce(send, max, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, inPlace, 2, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
            if (rank == root) MPI_Reduce(MPI_IN_PLACE, rootInPlace, 2, MPI_DOUBLE, MPI_MIN, root, MPI_COMM_WORLD);
            else MPI_Reduce(rootInPlace, null, 2, MPI_DOUBLE, MPI_MIN, root, MPI_COMM_WORLD);

            var requests = new MPI_Request?[4];
            MPI_Ireduce(send, isum, 2, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD, out requests[0]);
            MPI_Iallreduce(send, imax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, out requests[1]);
            MPI_Iallreduce(MPI_IN_PLACE, iinPlace, 2, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD, out requests[2]);
            if (rank == root) MPI_Ireduce(MPI_IN_PLACE, irootInPlace, 2, MPI_DOUBLE, MPI_MIN, root, MPI_COMM_WORLD, out requests[3]);
            else MPI_Ireduce(irootInPlace, null, 2, MPI_DOUBLE, MPI_MIN, root, MPI_COMM_WORLD, out requests[3]);
            MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
            Assert.All(requests, Assert.Null);

            (blocking[rank], nonblocking[rank]) = ([.. sum, .. max, .. inPlace, .. rootInPlace], [.. isum, .. imax, .. iinPlace, .. irootInPlace]);
        }, Bounded);

        Assert.Equal(blocking, nonblocking);
        double total = ranks * (ranks + 1) / 2.0;
        Assert.Equal([total, -(total - ranks), -1], nonblocking[ranks / 2][..3]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Igather_Igatherv_Iscatter_AndIscatterv_CompletedByWaitany_BuffersHoldWhatTheBlockingFormsGive(int ranks)
    {
        var blocking = new long[ranks][];
        var nonblocking = new long[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int root = ranks - 1;
            bool isRoot = rank == root;
            long[] pair = [rank, 10 * rank];
            // Rank r gives r + 1 elements to the v-forms; the root stores rank i's block from 10 i, backwards in rank order.
            var uneven = Enumerable.Repeat((long)rank, rank + 1).ToArray();
            int[] counts = [.. Enumerable.Range(1, ranks)], displs = [.. Enumerable.Range(0, ranks).Select(i => 10 * (ranks - 1 - i))];
            long[] all = [.. Enumerable.Range(0, 2 * ranks).Select(i => 100L + i)];
            long[] spread = [.. Enumerable.Range(0, 10 * ranks).Select(i => 1000L + i)];
            long[] Fresh(int length) => Enumerable.Repeat(-1L, length).ToArray();

            long[] gathered = Fresh(2 * ranks), gatheredv = Fresh(10 * ranks), scattered = Fresh(3), scatteredv = Fresh(ranks + 1);
            MPI_Gather(pair, 2, MPI_LONG, isRoot ? gathered : null, 2, MPI_LONG, root, MPI_COMM_WORLD);
            MPI_Gatherv(uneven, rank + 1, MPI_LONG, isRoot ? gatheredv : null, isRoot ? counts : null, isRoot ? displs : null, MPI_LONG, root, MPI_COMM_WORLD);
            MPI_Scatter(isRoot ? all : null, 2, MPI_LONG, scattered, 2, MPI_LONG, root, MPI_COMM_WORLD);
            MPI_Scatterv(isRoot ? spread : null, isRoot ? counts : null, isRoot ? displs : null, MPI_LONG, scatteredv, rank + 1, MPI_LONG, root, MPI_COMM_WORLD);

            long[] igathered = Fresh(2 * ranks), igatheredv = Fresh(10 * ranks), iscattered = Fresh(3), iscatteredv = Fresh(ranks + 1);
            var requests = new MPI_Request?[4];
            MPI_Igather(pair, 2, MPI_LONG, isRoot ? igathered : null, 2, MPI_LONG, root, MPI_COMM_WORLD, out requests[0]);
            MPI_Igatherv(uneven, rank + 1, MPI_LONG, isRoot ? igatheredv : null, isRoot ? counts : null, isRoot ? displs : null, MPI_LONG, root, MPI_COMM_WORLD, out requests[1]);
            MPI_Iscatter(isRoot ? all : null, 2, MPI_LONG, iscattered, 2, MPI_LONG, root, MPI_COMM_WORLD, out requests[2]);
            MPI_Iscatterv(isRoot ? spread : null, isRoot ? counts : null, isRoot ? displs : null, MPI_LONG, iscatteredv, rank + 1, MPI_LONG, root, MPI_COMM_WORLD, out requests[3]);
            var done = new List<int>();
            for (int i = 0; i <= requests.Length; i++)
            {
                MPI_Waitany(requests.Length, requests, out int index, MPI_STATUS_IGNORE);
                done.Add(index);
            }
            Assert.Equal([0, 1, 2, 3], done[..4].Order());
            Assert.Equal(MPI_UNDEFINED, done[4]);

            (blocking[rank], nonblocking[rank]) = ([.. gathered, .. gatheredv, .. scattered, .. scatteredv], [.. igathered, .. igatheredv, .. iscattered, .. iscatteredv]);
        }, Bounded);

        Assert.Equal(blocking, nonblocking);
        Assert.Equal([100L, 101, -1], nonblocking[0][(12 * ranks)..(12 * ranks + 3)]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Iallgather_Iallgatherv_Ialltoall_AndIalltoallv_CompletedByTests_BuffersHoldWhatTheBlockingFormsGive(int ranks)
    {
        var blocking = new int[ranks][];
        var nonblocking = new int[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] Fresh(int length) => Enumerable.Repeat(-1, length).ToArray();
            int[] pair = [rank, -rank, 99];
            int[] InPlace()
            {
                var buffer = Fresh(2 * ranks);
                (buffer[2 * rank], buffer[2 * rank + 1]) = (rank, rank * rank);
                return buffer;
            }
            // The v-forms: rank i gives i + 1 elements, stored from 5 i; rank i sends j + 1 copies of 10 i + j to rank j.
            int[] counts = [.. Enumerable.Range(1, ranks)], displs = [.. Enumerable.Range(0, ranks).Select(i => 5 * i)];
            var uneven = Enumerable.Repeat(rank, rank + 1).ToArray();
            int[] blocks = [.. Enumerable.Range(0, ranks).SelectMany(j => new[] { 10 * rank + j, -(10 * rank + j) })];
            int[] sendcounts = [.. Enumerable.Range(1, ranks)], sdispls = [.. Enumerable.Range(0, ranks).Select(j => j * (j + 1) / 2)];
            int[] sendv = [.. Enumerable.Range(0, ranks).SelectMany(j => Enumerable.Repeat(10 * rank + j, j + 1))];
            int[] recvcounts = Enumerable.Repeat(rank + 1, ranks).ToArray(), rdispls = [.. Enumerable.Range(0, ranks).Select(i => 4 * i)];

            int[] gathered = Fresh(2 * ranks), inPlace = InPlace(), gatheredv = Fresh(5 * ranks), exchanged = Fresh(2 * ranks), exchangedv = Fresh(4 * ranks);
            MPI_Allgather(pair, 2, MPI_INT, gathered, 2, MPI_INT, MPI_COMM_WORLD);
            MPI_Allgather(MPI_IN_PLACE, 0, null, inPlace, 2, MPI_INT, MPI_COMM_WORLD);
            MPI_Allgatherv(uneven, rank + 1, MPI_INT, gatheredv, counts, displs, MPI_INT, MPI_COMM_WORLD);
            MPI_Alltoall(blocks, 2, MPI_INT, exchanged, 2, MPI_INT, MPI_COMM_WORLD);
            MPI_Alltoallv(sendv, sendcounts, sdispls, MPI_INT, exchangedv, recvcounts, rdispls, MPI_INT, MPI_COMM_WORLD);

            int[] igathered = Fresh(2 * ranks), iinPlace = InPlace(), igatheredv = Fresh(5 * ranks), iexchanged = Fresh(2 * ranks), iexchangedv = Fresh(4 * ranks);
            var requests = new MPI_Request?[5];
            MPI_Iallgather(pair, 2, MPI_INT, igathered, 2, MPI_INT, MPI_COMM_WORLD, out requests[0]);
            MPI_Iallgather(MPI_IN_PLACE, 0, null, iinPlace, 2, MPI_INT, MPI_COMM_WORLD, out requests[1]);
            MPI_Iallgatherv(uneven, rank + 1, MPI_INT, igatheredv, counts, displs, MPI_INT, MPI_COMM_WORLD, out requests[2]);
            MPI_Ialltoall(blocks, 2, MPI_INT, iexchanged, 2, MPI_INT, MPI_COMM_WORLD, out requests[3]);
            MPI_Ialltoallv(sendv, sendcounts, sdispls, MPI_INT, iexchangedv, recvcounts, rdispls, MPI_INT, MPI_COMM_WORLD, out requests[4]);
            // The first by MPI_Test, one by MPI_Testany, the rest by MPI_Testsome and MPI_Testall.
            var deadline = DateTime.UtcNow.AddSeconds(20);
            for (bool flag = false; !flag && DateTime.UtcNow < deadline;) MPI_Test(requests[0], out flag, MPI_STATUS_IGNORE);
            int any = MPI_UNDEFINED;
            for (bool flag = false; !flag && DateTime.UtcNow < deadline;) MPI_Testany(5, requests, out any, out flag, MPI_STATUS_IGNORE);
            Assert.NotEqual(MPI_UNDEFINED, any);
            Assert.Null(requests[any]);
            MPI_Testsome(5, requests, out int outcount, new int[5], MPI_STATUSES_IGNORE);
            for (bool flag = false; !flag && DateTime.UtcNow < deadline;) MPI_Testall(5, requests, out flag, MPI_STATUSES_IGNORE);
            Assert.All(requests[1..], Assert.Null);

            (blocking[rank], nonblocking[rank]) = ([.. gathered, .. inPlace, .. gatheredv, .. exchanged, .. exchangedv],
                [.. igathered, .. iinPlace, .. igatheredv, .. iexchanged, .. iexchangedv]);
        }, Bounded);

        Assert.Equal(blocking, nonblocking);
        Assert.Equal(Enumerable.Range(0, ranks).SelectMany(i => new[] { i, -i }), nonblocking[ranks - 1][..(2 * ranks)]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Iallreduce_PolledByMPI_TestInAComputeLoop_CompletesWhileTheRankComputes(int ranks)
    {
        var sums = new long[ranks][];
        var completedWhileComputing = new bool[ranks];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var local = Enumerable.Range(0, 1000).Select(i => (long)(i * (rank + 1))).ToArray();
            var sum = new long[local.Length];
            MPI_Iallreduce(local, sum, local.Length, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, out var request);
            // Compute, polling between steps, until the sum arrives; the deadline bounds the loop, it is not measured.
            var deadline = DateTime.UtcNow.AddSeconds(20);
            double work = 0;
            bool done = false;
            for (int step = 0; !done && DateTime.UtcNow < deadline; step++)
            {
                for (int i = 0; i < 10_000; i++) work += Math.Sqrt(step + i);
                MPI_Test(request, out done, MPI_STATUS_IGNORE);
            }
            completedWhileComputing[rank] = done;
            MPI_Wait(request, MPI_STATUS_IGNORE);
            sums[rank] = sum;
        }, Bounded);

        Assert.All(completedWhileComputing, Assert.True);
        long factor = ranks * (ranks + 1) / 2;
        Assert.All(sums, s => Assert.Equal(Enumerable.Range(0, 1000).Select(i => i * factor), s));
    }

    [Fact]
    public void MPI_Request_free_ActiveNonblockingCollective_ThrowsMpiErrRequestAndTheRequestStillCompletes()
    {
        (int Class, string Message, bool Kept) observed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Ibarrier(MPI_COMM_WORLD, out var request);
            if (rank == 0)
            {
                MPI_Request? freed = request;
                var error = Assert.Throws<MpiException>(() => MPI_Request_free(ref freed));
                MPI_Error_class(error, out int errorClass);
                observed = (errorClass, error.Message, freed == request);
            }
            MPI_Wait(request, MPI_STATUS_IGNORE);
        }, Bounded);

        Assert.Equal(MPI_ERR_REQUEST, observed.Class);
        Assert.Contains("MPI_Request_free: a collective's request cannot be freed while active", observed.Message);
        Assert.True(observed.Kept);
    }

    [Fact]
    public void MPI_Iallreduce_CountPastTheBuffer_ThrowsInvalidCountAtTheCall()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            int[] send = [1, 2], recv = new int[1];
            MPI_Iallreduce(send, recv, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, out var request);
        }, Bounded));

        Assert.Contains("MPI_Iallreduce: the receive buffer holds 1 elements; 2 are needed", error.Message);
    }
}
