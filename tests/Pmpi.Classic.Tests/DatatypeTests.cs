namespace Pmpi.Classic.Tests;

/// <summary>Derived datatypes: which elements of a buffer a send takes and a receive fills.</summary>
public sealed class DatatypeTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Type_vector_ColumnOfRowMajorMatrix_SentAsColumnReceivedAsRowAndBack()
    {
        int[]? row = null, matrix = null;
        int count = -1;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // A 3 x 4 matrix, row-major: a column is 3 elements 4 apart.
            MPI_Type_vector(3, 1, 4, MPI_INT, out var column);
            MPI_Type_commit(ref column);
            if (rank == 0)
            {
                var a = Enumerable.Range(0, 12).ToArray();
                MPI_Send(a, 1, column, 1, 0, MPI_COMM_WORLD);
                var b = new int[12];
                var status = new MPI_Status();
                MPI_Recv(b, 1, column, 1, 1, MPI_COMM_WORLD, status);
                MPI_Get_count(status, column, out count);
                matrix = b;
            }
            else
            {
                var received = new int[3];
                MPI_Recv(received, 3, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                row = received;
                int[] back = [-1, -2, -3];
                MPI_Send(back, 3, MPI_INT, 0, 1, MPI_COMM_WORLD);
            }
            MPI_Datatype? handle = column;
            MPI_Type_free(ref handle);
            Assert.Null(handle);
        }, Bounded);

        Assert.Equal([0, 4, 8], row!);
        Assert.Equal([-1, 0, 0, 0, -2, 0, 0, 0, -3, 0, 0, 0], matrix!);
        Assert.Equal(1, count);
    }

    [Fact]
    public void MPI_Type_contiguous_CountOfTwo_TakesFourConsecutiveElements()
    {
        long[]? received = null;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Type_contiguous(2, MPI_LONG, out var pair);
            MPI_Type_commit(ref pair);
            if (rank == 0)
            {
                long[] data = [1, 2, 3, 4, 5];
                MPI_Ssend(data, 2, pair, 1, 0, MPI_COMM_WORLD);
            }
            else
            {
                var buffer = new long[5];
                MPI_Recv(buffer, 5, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received = buffer;
            }
        }, Bounded);

        Assert.Equal([1L, 2, 3, 4, 0], received!);
    }

    [Fact]
    public void MPI_Bcast_VectorOfBlocks_EveryRankGetsTheBlocksAndKeepsTheGaps()
    {
        var results = new double[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // Blocks of 2 elements 3 apart: elements 0, 1, 3, 4 of 5.
            MPI_Type_vector(2, 2, 3, MPI_DOUBLE, out var blocks);
            MPI_Type_commit(ref blocks);
            var buffer = rank == 1 ? [10.0, 11, 12, 13, 14] : Enumerable.Repeat(-(double)rank, 5).ToArray();
            MPI_Bcast(buffer, 1, blocks, 1, MPI_COMM_WORLD);
            results[rank] = buffer;
        }, Bounded);

        Assert.Equal([10.0, 11, -0.0, 13, 14], results[0]);
        Assert.Equal([10.0, 11, 12, 13, 14], results[1]);
        Assert.Equal([10.0, 11, -2, 13, 14], results[2]);
    }

    [Fact]
    public void MPI_Irecv_IntoEveryOtherElement_LandsInPlaceAtWait()
    {
        float[]? received = null;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Type_vector(3, 1, 2, MPI_FLOAT, out var everyOther);
            MPI_Type_commit(ref everyOther);
            if (rank == 0)
            {
                float[] data = [1, 2, 3];
                MPI_Isend(data, 3, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, out var send);
                MPI_Wait(send, MPI_STATUS_IGNORE);
            }
            else
            {
                var buffer = new float[6];
                MPI_Irecv(buffer, 1, everyOther, 0, 0, MPI_COMM_WORLD, out var request);
                MPI_Wait(request, MPI_STATUS_IGNORE);
                received = buffer;
            }
        }, Bounded);

        Assert.Equal([1f, 0, 2, 0, 3, 0], received!);
    }

    [Fact]
    public void MPI_Send_UncommittedDerived_ThrowsNamingMpiTypeCommit()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Type_contiguous(2, MPI_INT, out var pair);
            int[] data = [1, 2];
            MPI_Send(data, 1, pair, 0, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Send: the datatype MPI_Type_contiguous(2, MPI_INT) (Int32) is not committed; call MPI_Type_commit first", error.Message);
    }

    [Fact]
    public void MPI_Send_VectorReachingPastTheBuffer_ThrowsInvalidCount()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Type_vector(3, 1, 4, MPI_INT, out var column);
            MPI_Type_commit(ref column);
            var data = new int[8];
            MPI_Send(data, 1, column, 0, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Send: 1 items of MPI_Type_vector(3, 1, 4, MPI_INT) (Int32) reach element 8, past the buffer of 8 elements", error.Message);
    }

    [Fact]
    public void MPI_Allreduce_DerivedDatatype_ThrowsNamingTheCallsThatTakeThem()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Type_contiguous(2, MPI_INT, out var pair);
            MPI_Type_commit(ref pair);
            int[] data = [1, 2], sum = new int[2];
            MPI_Allreduce(data, sum, 1, pair, MPI_SUM, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Allreduce takes a predefined datatype, not the derived MPI_Type_contiguous(2, MPI_INT) (Int32)", error.Message);
    }
}
