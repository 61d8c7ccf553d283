namespace Pmpi.Tests.PointToPoint;

/// <summary>
/// Persistent requests (MPI_Send_init, MPI_Recv_init, MPI_Start(all), MPI-4's MPI_*_init collectives): bound once,
/// started round after round, each round reading the arrays as they are then.
/// </summary>
public abstract class PersistentRequestTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void PersistentSendAndReceive_RoundsOfARing_EachCarriesTheArrayAsItIsAtStart(int size)
    {
        const int rounds = 5;
        var results = Run(size, world =>
        {
            int right = (world.Rank + 1) % world.Size, left = (world.Rank - 1 + world.Size) % world.Size;
            var outgoing = new int[3];
            var incoming = new int[3];
            var send = world.PersistentSend(outgoing, right, 4);
            var receive = world.PersistentReceive(left, 4, incoming);
            var seen = new List<int>();
            for (int round = 0; round < rounds; round++)
            {
                Array.Fill(outgoing, world.Rank * 100 + round);
                PersistentRequest.StartAll(receive, send);
                Assert.True(receive.IsActive);
                receive.Wait();
                send.Wait();
                Assert.False(receive.IsActive);
                Assert.Same(incoming, receive.Value);
                seen.Add(incoming[2]);
            }
            return seen;
        });

        for (int rank = 0; rank < size; rank++)
        {
            int left = (rank - 1 + size) % size;
            Assert.Equal(Enumerable.Range(0, rounds).Select(round => left * 100 + round), results[rank]);
        }
    }

    [Fact]
    public void PersistentRequest_Inactive_WaitAndTestReturnAtOnce_StartWhileActiveThrows()
    {
        var results = Run(2, world =>
        {
            var receive = world.PersistentReceive<string>(1 - world.Rank, 2);
            var never = receive.Wait(); // never started: an empty status at once
            receive.Start();
            var twice = Assert.Throws<MpiException>(receive.Start);
            world.Send($"from {world.Rank}", 1 - world.Rank, 2);
            var status = receive.Wait();
            var again = receive.Test(); // completed: inactive again
            return (never.Source, twice.ErrorClass, status.Source, again?.Source, receive.Value);
        });

        Assert.Equal((Communicator.AnySource, ErrorClass.InvalidRequest, 1, Communicator.AnySource, "from 1"), results[0]);
        Assert.Equal((Communicator.AnySource, ErrorClass.InvalidRequest, 0, Communicator.AnySource, "from 0"), results[1]);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void PersistentCollectives_RoundAfterRound_GiveTheBlockingResultOfTheArraysAsTheyAreThen(int size)
    {
        const int rounds = 3;
        var results = Run(size, world =>
        {
            int rank = world.Rank, n = world.Size;
            var input = new int[2];
            var broadcast = new int[4];
            var spread = new int[n * 2];
            var barrier = world.PersistentBarrier();
            var allreduce = world.PersistentAllreduce(input, Operation<int>.Add);
            var reduce = world.PersistentReduce(input, Operation<int>.Max, n - 1);
            var bcast = world.PersistentBroadcast(broadcast, 0);
            var gather = world.PersistentGather(input, 0);
            var scatter = world.PersistentScatter(rank == 0 ? spread : null, 2, 0);
            var allgather = world.PersistentAllgather(input);
            var alltoall = world.PersistentAlltoall(spread, 2);
            PersistentRequest[] all = [barrier, allreduce, reduce, bcast, gather, scatter, allgather, alltoall];
            var rows = new List<int[]>();
            for (int round = 0; round < rounds; round++)
            {
                input[0] = rank + round;
                input[1] = round;
                if (rank == 0) Array.Fill(broadcast, 7 * round);
                for (int i = 0; i < spread.Length; i++) spread[i] = rank * 1000 + round * 100 + i;
                PersistentRequest.StartAll(all);
                foreach (var request in all) request.Wait();
                rows.Add([.. allreduce.Value, .. reduce.Value ?? [-1, -1], .. broadcast, .. gather.Value ?? [], .. scatter.Value, .. allgather.Value, .. alltoall.Value]);
            }
            return rows;
        });

        for (int rank = 0; rank < size; rank++)
        {
            for (int round = 0; round < rounds; round++)
            {
                int n = size;
                int[] inputs = [.. Enumerable.Range(0, n).SelectMany(r => new[] { r + round, round })];
                int[] expected =
                [
                    n * (n - 1) / 2 + n * round, n * round,
                    .. rank == n - 1 ? new[] { n - 1 + round, round } : [-1, -1],
                    .. Enumerable.Repeat(7 * round, 4),
                    .. rank == 0 ? inputs : [],
                    round * 100 + 2 * rank, round * 100 + 2 * rank + 1,
                    .. inputs,
                    .. Enumerable.Range(0, n).SelectMany(from => new[] { from * 1000 + round * 100 + 2 * rank, from * 1000 + round * 100 + 2 * rank + 1 }),
                ];
                Assert.Equal(expected, results[rank][round]);
            }
        }
    }
}
