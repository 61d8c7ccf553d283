namespace Pmpi.Classic.Tests;

/// <summary>MPI_Sendrecv, MPI_Ssend, probes and the tests and waits over requests, as C programs call them.</summary>
public sealed class PointToPointTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Sendrecv_RingShift_EachGetsLeftNeighboursBlockAndStatus()
    {
        var received = new int[4][];
        var sources = new int[4];
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            int[] mine = [rank, rank * 10], theirs = [-1, -1, -1];
            var status = new MPI_Status();
            MPI_Sendrecv(mine, 2, MPI_INT, (rank + 1) % size, 3, theirs, 3, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, status);
            MPI_Get_count(status, MPI_INT, out int count);
            Assert.Equal(2, count);
            received[rank] = theirs;
            sources[rank] = status.MPI_SOURCE;
        }, Bounded);

        Assert.Equal([[3, 30, -1], [0, 0, -1], [1, 10, -1], [2, 20, -1]], received);
        Assert.Equal([3, 0, 1, 2], sources);
    }

    [Fact]
    public void MPI_Sendrecv_NonPeriodicShiftOfValues_EndsExchangeWithProcNullAndKeepTheirValue()
    {
        var received = new double[3];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
            double mine = rank + 0.5, theirs = -1;
            MPI_Sendrecv(ref mine, 1, MPI_DOUBLE, right, 0, ref theirs, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            received[rank] = theirs;
        }, Bounded);

        Assert.Equal([-1, 0.5, 1.5], received);
    }

    [Fact]
    public void MPI_Sendrecv_replace_RingShiftOfAPrefixAndOfAValue_EachHoldsItsLeftNeighboursInPlace()
    {
        var arrays = new int[3][];
        var values = new double[3];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            int right = (rank + 1) % size, left = (rank + size - 1) % size;
            int[] buffer = [rank, 10 * rank, 99];
            var status = new MPI_Status();
            MPI_Sendrecv_replace(buffer, 2, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, status);
            Assert.Equal(left, status.MPI_SOURCE);
            int[] whole = [rank, rank];
            MPI_Sendrecv_replace(whole, 2, MPI_INT, right, 2, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            Assert.Equal([left, left], whole);
            arrays[rank] = buffer;
            // Not periodic: rank 0 receives from MPI_PROC_NULL and keeps its value.
            double value = rank + 0.5;
            MPI_Sendrecv_replace(ref value, 1, MPI_DOUBLE, rank + 1 < size ? rank + 1 : MPI_PROC_NULL, 3,
                rank > 0 ? rank - 1 : MPI_PROC_NULL, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            values[rank] = value;
        }, Bounded);

        Assert.Equal([[2, 20, 99], [0, 0, 99], [1, 10, 99]], arrays);
        Assert.Equal([0.5, 0.5, 1.5], values);
    }

    [Fact]
    public void MPI_Ssend_ArrayAndValue_ArriveAfterTheReceiverMatched()
    {
        var received = new long[3];
        long value = 0;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank == 0)
            {
                long[] buffer = [4, 5, 6, 7];
                MPI_Ssend(buffer, 3, MPI_LONG, 1, 1, MPI_COMM_WORLD);
                long one = 42;
                MPI_Ssend(ref one, 1, MPI_LONG, 1, 2, MPI_COMM_WORLD);
            }
            else
            {
                MPI_Recv(received, 3, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(ref value, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }, Bounded);

        Assert.Equal([4L, 5, 6], received);
        Assert.Equal(42, value);
    }

    [Fact]
    public void MPI_Probe_MessageOfUnknownLength_GetCountSizesTheReceive()
    {
        int[]? received = null;
        (int Source, int Tag, int Count) probed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank == 1)
            {
                int[] data = [1, 2, 3, 4, 5];
                MPI_Send(data, 5, MPI_INT, 0, 9, MPI_COMM_WORLD);
                return;
            }
            var status = new MPI_Status();
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status);
            MPI_Get_count(status, MPI_INT, out int count);
            probed = (status.MPI_SOURCE, status.MPI_TAG, count);
            var buffer = new int[count];
            MPI_Recv(buffer, count, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            received = buffer;
        }, Bounded);

        Assert.Equal((1, 9, 5), probed);
        Assert.Equal([1, 2, 3, 4, 5], received!);
    }

    [Fact]
    public void MPI_Iprobe_BeforeAndAfterTheSend_FlagFollowsTheMessage()
    {
        (bool Before, bool After, int Count) observed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var status = new MPI_Status();
            if (rank == 0)
            {
                MPI_Iprobe(1, 4, MPI_COMM_WORLD, out bool before, status);
                MPI_Barrier(MPI_COMM_WORLD);
                bool after = false;
                while (!after) MPI_Iprobe(1, 4, MPI_COMM_WORLD, out after, status);
                MPI_Get_count(status, MPI_DOUBLE, out int count);
                var buffer = new double[count];
                MPI_Recv(buffer, count, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                observed = (before, after, count);
            }
            else
            {
                MPI_Barrier(MPI_COMM_WORLD);
                double[] data = [1, 2];
                MPI_Send(data, 2, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
            }
        }, Bounded);

        Assert.Equal((false, true, 2), observed);
    }

    [Fact]
    public void MPI_Get_count_ProbedWithAnotherDatatype_ThrowsTypeMismatch()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank == 1)
            {
                int[] data = [1];
                MPI_Send(data, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
                return;
            }
            var status = new MPI_Status();
            MPI_Probe(1, 0, MPI_COMM_WORLD, status);
            MPI_Get_count(status, MPI_DOUBLE, out int _);
        }, Bounded));

        Assert.Contains("MPI_Get_count: the probed message does not hold MPI_DOUBLE (Double) elements", error.Message);
    }

    [Fact]
    public void MPI_Test_ReceivePendingThenSent_FlagTurnsAndDataIsInPlace()
    {
        (bool Early, int[] Data, int Source) observed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank == 1)
            {
                var buffer = new int[3];
                MPI_Irecv(buffer, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, out var request);
                MPI_Test(request, out bool early, MPI_STATUS_IGNORE);
                MPI_Barrier(MPI_COMM_WORLD);
                var status = new MPI_Status();
                bool done = false;
                while (!done) MPI_Test(request, out done, status);
                observed = (early, buffer, status.MPI_SOURCE);
            }
            else
            {
                MPI_Barrier(MPI_COMM_WORLD);
                int[] data = [7, 8];
                MPI_Send(data, 2, MPI_INT, 1, 0, MPI_COMM_WORLD);
            }
        }, Bounded);

        Assert.False(observed.Early);
        Assert.Equal([7, 8, 0], observed.Data!);
        Assert.Equal(0, observed.Source);
    }

    [Fact]
    public void MPI_Waitany_ReceivesFromEveryRank_EachIndexOnceThenUndefined()
    {
        var indices = new List<int>();
        var sums = new int[4];
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            if (rank != 0)
            {
                int[] data = [rank, rank];
                MPI_Send(data, 2, MPI_INT, 0, rank, MPI_COMM_WORLD);
                return;
            }
            var buffers = new int[size][];
            var requests = new MPI_Request?[size];
            for (int source = 1; source < size; source++)
            {
                buffers[source] = new int[2];
                MPI_Irecv(buffers[source], 2, MPI_INT, source, source, MPI_COMM_WORLD, out var request);
                requests[source] = request;
            }
            var status = new MPI_Status();
            for (int i = 0; i < size; i++)
            {
                MPI_Waitany(size, requests, out int index, status);
                indices.Add(index);
                if (index != MPI_UNDEFINED)
                {
                    Assert.Equal(index, status.MPI_SOURCE);
                    Assert.Null(requests[index]);
                    sums[index] = buffers[index].Sum();
                }
            }
        }, Bounded);

        Assert.Equal([1, 2, 3], indices.Take(3).Order());
        Assert.Equal(MPI_UNDEFINED, indices[3]);
        Assert.Equal([0, 2, 4, 6], sums);
    }

    [Fact]
    public void MPI_Testall_AndTestany_ChangeNothingUntilComplete()
    {
        (bool AllEarly, bool AnyEarly, int AnyIndex, bool NullsAfter, int[] Sources, int Undefined) observed = default;
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            if (rank != 0)
            {
                MPI_Barrier(MPI_COMM_WORLD);
                double[] one = [rank];
                MPI_Send(one, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
                return;
            }
            var (a, b) = (new double[1], new double[1]);
            var requests = new MPI_Request?[2];
            MPI_Irecv(a, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, out var first);
            MPI_Irecv(b, 1, MPI_DOUBLE, 2, 0, MPI_COMM_WORLD, out var second);
            (requests[0], requests[1]) = (first, second);
            MPI_Testall(2, requests, out bool allEarly, MPI_STATUSES_IGNORE);
            MPI_Testany(2, requests, out int anyIndex, out bool anyEarly, MPI_STATUS_IGNORE);
            bool untouched = requests[0] is not null && requests[1] is not null;
            MPI_Barrier(MPI_COMM_WORLD);
            var statuses = new MPI_Status?[2];
            bool all = false;
            while (!all) MPI_Testall(2, requests, out all, statuses);
            MPI_Testany(2, requests, out int undefined, out bool flag, MPI_STATUS_IGNORE);
            Assert.True(flag);
            Assert.Equal([1.0, 2.0], [a[0], b[0]]);
            observed = (allEarly, anyEarly, anyIndex, untouched && requests.All(r => r is null), [statuses[0]!.MPI_SOURCE, statuses[1]!.MPI_SOURCE], undefined);
        }, Bounded);

        Assert.Equal((false, false, MPI_UNDEFINED, true), (observed.AllEarly, observed.AnyEarly, observed.AnyIndex, observed.NullsAfter));
        Assert.Equal([1, 2], observed.Sources!);
        Assert.Equal(MPI_UNDEFINED, observed.Undefined);
    }

    [Fact]
    public void MPI_Waitsome_AndTestsome_ReceivesFromEveryRank_EachIndexOnceWithItsStatusThenUndefined()
    {
        var completed = new List<(int Index, int Source)>();
        (int Early, int Last) observed = default;
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            if (rank != 0)
            {
                MPI_Barrier(MPI_COMM_WORLD);
                int[] data = [rank];
                MPI_Send(data, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
                return;
            }
            var buffers = new int[size][];
            var requests = new MPI_Request?[size];
            for (int source = 1; source < size; source++)
            {
                buffers[source] = new int[1];
                MPI_Irecv(buffers[source], 1, MPI_INT, source, 0, MPI_COMM_WORLD, out requests[source]);
            }
            int[] indices = new int[size];
            var statuses = new MPI_Status?[size];
            MPI_Testsome(size, requests, out int early, indices, statuses);
            MPI_Barrier(MPI_COMM_WORLD);
            while (true)
            {
                MPI_Waitsome(size, requests, out int outcount, indices, statuses);
                if (outcount == MPI_UNDEFINED) break;
                for (int k = 0; k < outcount; k++)
                {
                    Assert.Null(requests[indices[k]]);
                    Assert.Equal(indices[k], buffers[indices[k]][0]);
                    completed.Add((indices[k], statuses[k]!.MPI_SOURCE));
                }
            }
            MPI_Testsome(size, requests, out int last, indices, statuses);
            observed = (early, last);
        }, Bounded);

        Assert.Equal((0, MPI_UNDEFINED), observed);
        Assert.Equal([(1, 1), (2, 2), (3, 3)], completed.Order());
    }

    [Fact]
    public void MPI_Waitall_NewStatusArrayAndNullRequest_FillsEveryEntry()
    {
        MPI_Status?[] statuses = new MPI_Status?[3];
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] out1 = [rank], in1 = new int[1], in2 = new int[1];
            int other = 1 - rank;
            var requests = new MPI_Request?[3];
            MPI_Irecv(in1, 1, MPI_INT, other, 0, MPI_COMM_WORLD, out var receive);
            MPI_Isend(out1, 1, MPI_INT, other, 0, MPI_COMM_WORLD, out var send);
            (requests[0], requests[1]) = (receive, send);
            var mine = new MPI_Status?[3];
            MPI_Waitall(3, requests, mine);
            Assert.Equal(other, in1[0]);
            if (rank == 0) Array.Copy(mine, statuses, 3);
        }, Bounded);

        Assert.Equal(1, statuses[0]!.MPI_SOURCE);
        Assert.Equal((MPI_ANY_SOURCE, MPI_ANY_TAG), (statuses[2]!.MPI_SOURCE, statuses[2]!.MPI_TAG));
    }

    [Fact]
    public void MPI_Wait_AndTest_RequestNull_ReturnAtOnceWithAnEmptyStatus()
    {
        var waited = new MPI_Status { MPI_SOURCE = 5, MPI_TAG = 5 };
        var tested = new MPI_Status { MPI_SOURCE = 5, MPI_TAG = 5 };
        bool flag = false;
        int count = -1;
        Environment.Run(1, _ =>
        {
            MPI_Wait(MPI_REQUEST_NULL, waited);
            MPI_Test(MPI_REQUEST_NULL, out flag, tested);
            MPI_Get_count(waited, MPI_INT, out count);
        }, Bounded);

        Assert.True(flag);
        Assert.Equal((MPI_ANY_SOURCE, MPI_ANY_TAG, 0), (waited.MPI_SOURCE, waited.MPI_TAG, count));
        Assert.Equal((MPI_ANY_SOURCE, MPI_ANY_TAG), (tested.MPI_SOURCE, tested.MPI_TAG));
    }
}
