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
