namespace Pmpi.Classic.Tests;

/// <summary>Persistent requests (MPI_Send_init, MPI_Recv_init, MPI_Start, MPI_Startall, MPI_Request_free) as C programs use them.</summary>
public sealed class PersistentTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Send_init_RingOverRoundsWithTheBufferChanged_EachRoundCarriesTheBufferAsItWasAtTheStart(int ranks)
    {
        const int Rounds = 4;
        var received = new int[ranks][][];
        var stayed = new bool[ranks];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            // The receive takes 2 elements into a buffer of 3, so each round's data is copied to its front.
            int[] outgoing = new int[2], incoming = [-1, -1, -1];
            var requests = new MPI_Request?[2];
            MPI_Recv_init(incoming, 2, MPI_INT, (rank + size - 1) % size, 8, MPI_COMM_WORLD, out var receive);
            MPI_Send_init(outgoing, 2, MPI_INT, (rank + 1) % size, 8, MPI_COMM_WORLD, out var send);
            (requests[0], requests[1]) = (receive, send);
            received[rank] = new int[Rounds][];
            for (int round = 0; round < Rounds; round++)
            {
                (outgoing[0], outgoing[1]) = (100 * rank + round, -round);
                MPI_Startall(2, requests);
                MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
                received[rank][round] = (int[])incoming.Clone();
            }
            stayed[rank] = requests[0] == receive && requests[1] == send;
            MPI_Request_free(ref requests[0]);
            MPI_Request_free(ref requests[1]);
            Assert.Equal([MPI_REQUEST_NULL, MPI_REQUEST_NULL], requests);
        }, Bounded);

        for (int rank = 0; rank < ranks; rank++)
        {
            int left = (rank + ranks - 1) % ranks;
            Assert.Equal(Enumerable.Range(0, Rounds).Select(round => new[] { 100 * left + round, -round, -1 }), received[rank]);
        }
        Assert.All(stayed, Assert.True);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Allreduce_init_ThreeRoundsWithTheSendBufferChanged_EachRoundSumsTheBuffersAsTheyWereAtTheStart(int ranks)
    {
        const int Rounds = 3;
        var sums = new int[ranks][][];
        var inPlace = new double[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] send = new int[2], sum = [-1, -1, -1];
            double[] running = [rank + 1.0];
            MPI_Allreduce_init(send, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, out var request);
            MPI_Allreduce_init(MPI_IN_PLACE, running, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, out var max);
            sums[rank] = new int[Rounds][];
            for (int round = 0; round < Rounds; round++)
            {
                (send[0], send[1]) = (rank + round, 10 * round);
                MPI_Start(request);
                MPI_Wait(request, MPI_STATUS_IGNORE);
                sums[rank][round] = (int[])sum.Clone();
                // In place, the input is the buffer as it is at the start: the last round's maximum, raised by the rank.
                running[0] += rank;
                MPI_Start(max);
                MPI_Wait(max, MPI_STATUS_IGNORE);
            }
            inPlace[rank] = running;
            MPI_Request? free = request;
            MPI_Request_free(ref free);
        }, Bounded);

        int total = ranks * (ranks - 1) / 2;
        var expected = Enumerable.Range(0, Rounds).Select(round => new[] { total + ranks * round, ranks * 10 * round, -1 });
        Assert.All(sums, s => Assert.Equal(expected, s));
        // From rank + 1, the last rank's raise of ranks - 1 makes each round's maximum.
        Assert.All(inPlace, r => Assert.Equal(ranks + Rounds * (ranks - 1.0), r[0]));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Bcast_init_Reduce_init_AndBarrier_init_StartedTogetherTwice_EachRoundAsTheBlockingForms(int ranks)
    {
        var broadcasts = new long[ranks][][];
        var reductions = new long[ranks][][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int root = ranks / 2;
            long[] buffer = [-rank, -rank, -rank], send = [0], product = [-1];
            var requests = new MPI_Request?[4];
            MPI_Bcast_init(buffer, 2, MPI_LONG, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[0]);
            MPI_Reduce_init(send, rank == root ? product : null, 1, MPI_LONG, MPI_PROD, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[1]);
            MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, out requests[2]);
            long[] rootSum = [rank];
            if (rank == root) MPI_Reduce_init(MPI_IN_PLACE, rootSum, 1, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[3]);
            else MPI_Reduce_init(rootSum, null, 1, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[3]);
            (broadcasts[rank], reductions[rank]) = (new long[2][], new long[2][]);
            for (int round = 0; round < 2; round++)
            {
                if (rank == root) (buffer[0], buffer[1]) = (100 + round, 200 + round);
                send[0] = rank + 1 + round;
                MPI_Startall(4, requests);
                MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
                broadcasts[rank][round] = (long[])buffer.Clone();
                reductions[rank][round] = [product[0], rootSum[0]];
            }
        }, Bounded);

        int root = ranks / 2;
        for (int rank = 0; rank < ranks; rank++) Assert.Equal([[100, 200, -rank], [101, 201, -rank]], broadcasts[rank]);
        long Product(int round) => Enumerable.Range(1 + round, ranks).Aggregate(1L, (p, x) => p * x);
        long sum = ranks * (ranks - 1) / 2;
        // In place, the root's input in the second round is the first round's sum.
        Assert.Equal([[Product(0), sum], [Product(1), 2 * sum - root]], reductions[root]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Gather_init_AndTheOtherGathersScattersAndAlltoalls_TwoRoundsWithNewData_EachRoundAsTheBlockingForms(int ranks)
    {
        var blocking = new int[ranks][];
        var persistent = new int[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int root = ranks - 1;
            bool isRoot = rank == root;
            int[] Fresh(int length) => Enumerable.Repeat(-1, length).ToArray();
            // Rank i's v-block is i + 1 elements, at 4 i; every send buffer is refilled each round.
            int[] counts = [.. Enumerable.Range(1, ranks)], displs = [.. Enumerable.Range(0, ranks).Select(i => 4 * i)];
            int[] pair = new int[2], uneven = new int[rank + 1], all = new int[2 * ranks], spread = new int[4 * ranks], blocks = new int[2 * ranks];
            int[] gathered = Fresh(2 * ranks), gatheredv = Fresh(4 * ranks), scattered = Fresh(2), scatteredv = Fresh(ranks);
            int[] allgathered = Fresh(2 * ranks), inPlace = Fresh(2 * ranks), allgatheredv = Fresh(4 * ranks), exchanged = Fresh(2 * ranks), exchangedv = Fresh(4 * ranks);
            var requests = new MPI_Request?[9];
            MPI_Gather_init(pair, 2, MPI_INT, isRoot ? gathered : null, 2, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[0]);
            MPI_Gatherv_init(uneven, rank + 1, MPI_INT, isRoot ? gatheredv : null, isRoot ? counts : null, isRoot ? displs : null, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[1]);
            MPI_Scatter_init(isRoot ? all : null, 2, MPI_INT, scattered, 2, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[2]);
            MPI_Scatterv_init(isRoot ? spread : null, isRoot ? counts : null, isRoot ? displs : null, MPI_INT, scatteredv, rank + 1, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[3]);
            MPI_Allgather_init(pair, 2, MPI_INT, allgathered, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[4]);
            MPI_Allgather_init(MPI_IN_PLACE, 0, null, inPlace, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[5]);
            MPI_Allgatherv_init(uneven, rank + 1, MPI_INT, allgatheredv, counts, displs, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[6]);
            MPI_Alltoall_init(blocks, 2, MPI_INT, exchanged, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[7]);
            MPI_Alltoallv_init(spread, counts, displs, MPI_INT, exchangedv, Enumerable.Repeat(rank + 1, ranks).ToArray(), displs, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, out requests[8]);
            var expected = new List<int>();
            var actual = new List<int>();
            for (int round = 0; round < 2; round++)
            {
                int seed = 1000 * round + 10 * rank;
                (pair[0], pair[1]) = (seed, -seed);
                Array.Fill(uneven, seed + 1);
                for (int i = 0; i < all.Length; i++) (all[i], blocks[i]) = (seed + i, seed - i);
                for (int i = 0; i < spread.Length; i++) spread[i] = seed + 2 * i;
                (inPlace[2 * rank], inPlace[2 * rank + 1]) = (seed, seed + 1);

                int[] g = Fresh(2 * ranks), gv = Fresh(4 * ranks), sc = Fresh(2), scv = Fresh(ranks), ag = Fresh(2 * ranks), ip = (int[])inPlace.Clone(),
                    agv = Fresh(4 * ranks), ex = Fresh(2 * ranks), exv = Fresh(4 * ranks);
                MPI_Gather(pair, 2, MPI_INT, isRoot ? g : null, 2, MPI_INT, root, MPI_COMM_WORLD);
                MPI_Gatherv(uneven, rank + 1, MPI_INT, isRoot ? gv : null, isRoot ? counts : null, isRoot ? displs : null, MPI_INT, root, MPI_COMM_WORLD);
                MPI_Scatter(isRoot ? all : null, 2, MPI_INT, sc, 2, MPI_INT, root, MPI_COMM_WORLD);
                MPI_Scatterv(isRoot ? spread : null, isRoot ? counts : null, isRoot ? displs : null, MPI_INT, scv, rank + 1, MPI_INT, root, MPI_COMM_WORLD);
                MPI_Allgather(pair, 2, MPI_INT, ag, 2, MPI_INT, MPI_COMM_WORLD);
                MPI_Allgather(MPI_IN_PLACE, 0, null, ip, 2, MPI_INT, MPI_COMM_WORLD);
                MPI_Allgatherv(uneven, rank + 1, MPI_INT, agv, counts, displs, MPI_INT, MPI_COMM_WORLD);
                MPI_Alltoall(blocks, 2, MPI_INT, ex, 2, MPI_INT, MPI_COMM_WORLD);
                MPI_Alltoallv(spread, counts, displs, MPI_INT, exv, Enumerable.Repeat(rank + 1, ranks).ToArray(), displs, MPI_INT, MPI_COMM_WORLD);
                expected.AddRange([.. g, .. gv, .. sc, .. scv, .. ag, .. ip, .. agv, .. ex, .. exv]);

                MPI_Startall(requests.Length, requests);
                MPI_Waitall(requests.Length, requests, MPI_STATUSES_IGNORE);
                actual.AddRange([.. gathered, .. gatheredv, .. scattered, .. scatteredv, .. allgathered, .. inPlace, .. allgatheredv, .. exchanged, .. exchangedv]);
            }
            (blocking[rank], persistent[rank]) = ([.. expected], [.. actual]);
        }, Bounded);

        Assert.Equal(blocking, persistent);
    }

    [Fact]
    public void MPI_Waitany_PersistentReceivesFromAnySource_StatusNamesTheSenderAndRequestsStayForTheNextRound()
    {
        var sources = new List<int>();
        int undefined = 0;
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank != 0)
            {
                for (int round = 0; round < 2; round++)
                {
                    double[] data = [rank + round / 10.0];
                    MPI_Send(data, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
                }
                return;
            }
            var buffers = new[] { new double[1], new double[1] };
            var requests = new MPI_Request?[2];
            MPI_Recv_init(buffers[0], 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, out requests[0]);
            MPI_Recv_init(buffers[1], 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, out requests[1]);
            var status = new MPI_Status();
            for (int round = 0; round < 2; round++)
            {
                MPI_Startall(2, requests);
                for (int i = 0; i < 2; i++)
                {
                    MPI_Waitany(2, requests, out int index, status);
                    Assert.NotNull(requests[index]);
                    MPI_Get_count(status, MPI_DOUBLE, out int count);
                    Assert.Equal(1, count);
                    Assert.Equal(status.MPI_SOURCE, (int)buffers[index][0]);
                    sources.Add(status.MPI_SOURCE);
                }
                MPI_Waitany(2, requests, out undefined, MPI_STATUS_IGNORE);
            }
        }, Bounded);

        Assert.Equal([1, 1, 2, 2], sources.Order());
        Assert.Equal(MPI_UNDEFINED, undefined);
    }

    [Fact]
    public void MPI_Wait_AndTest_InactivePersistentRequest_ReturnAtOnceWithAnEmptyStatus()
    {
        var waited = new MPI_Status { MPI_SOURCE = 5 };
        var tested = new MPI_Status { MPI_SOURCE = 5 };
        bool flag = false;
        Environment.Run(1, _ =>
        {
            var buffer = new int[1];
            MPI_Recv_init(buffer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, out var request);
            MPI_Wait(request, waited);
            MPI_Test(request, out flag, tested);
        }, Bounded);

        Assert.True(flag);
        Assert.Equal((MPI_ANY_SOURCE, MPI_ANY_SOURCE), (waited.MPI_SOURCE, tested.MPI_SOURCE));
    }

    [Fact]
    public void MPI_Start_ActiveOrNullRequest_ThrowsMpiErrRequest()
    {
        (int Active, int Null, int Value) observed = default;
        Environment.Run(1, _ =>
        {
            var buffer = new int[1];
            MPI_Recv_init(buffer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, out var request);
            MPI_Start(request);
            var active = Assert.Throws<MpiException>(() => MPI_Start(request));
            var none = Assert.Throws<MpiException>(() => MPI_Start(MPI_REQUEST_NULL));
            int[] value = [42];
            MPI_Send(value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            MPI_Wait(request, MPI_STATUS_IGNORE);
            MPI_Error_class(active, out int activeClass);
            MPI_Error_class(none, out int nullClass);
            Assert.Contains("MPI_Start: the persistent request is active", active.Message);
            observed = (activeClass, nullClass, buffer[0]);
        }, Bounded);

        Assert.Equal((MPI_ERR_REQUEST, MPI_ERR_REQUEST, 42), observed);
    }

    [Fact]
    public void MPI_Request_free_ActiveReceive_DataStillReachesTheBuffer()
    {
        long[] buffer = [-1, -1];
        bool delivered = false;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank == 0)
            {
                MPI_Barrier(MPI_COMM_WORLD);
                long[] data = [3, 4];
                MPI_Send(data, 2, MPI_LONG, 1, 0, MPI_COMM_WORLD);
                return;
            }
            MPI_Irecv(buffer, 2, MPI_LONG, 0, 0, MPI_COMM_WORLD, out var request);
            MPI_Request? freed = request;
            MPI_Request_free(ref freed);
            Assert.Null(freed);
            MPI_Barrier(MPI_COMM_WORLD);
            delivered = SpinWait.SpinUntil(() => Volatile.Read(ref buffer[1]) == 4, TimeSpan.FromSeconds(20));
        }, Bounded);

        Assert.True(delivered, "The freed receive's data did not reach the buffer within 20 s.");
        Assert.Equal([3L, 4], buffer);
    }

    [Fact]
    public void MPI_Request_free_RequestNull_ThrowsMpiErrRequest()
    {
        MPI_Request? request = MPI_REQUEST_NULL;

        var error = Assert.Throws<MpiException>(() => MPI_Request_free(ref request));

        Assert.Equal(ErrorClass.InvalidRequest, error.ErrorClass);
        Assert.Contains("MPI_Request_free: the request is MPI_REQUEST_NULL", error.Message);
    }
}
