namespace Pmpi.Classic.Tests;

/// <summary>The gathers, scatters, all-to-alls, scans and reduce-scatters of MPI-1, with C's counts and displacements.</summary>
public sealed class CollectiveTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Bcast_WholeAndPrefixOfArrays_EveryRankHoldsTheRootsElementsAndKeepsItsTail()
    {
        var whole = new double[3][];
        var prefixes = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var large = new double[1 << 19];
            if (rank == 2) for (int i = 0; i < large.Length; i++) large[i] = i * 0.5;
            MPI_Bcast(large, large.Length, MPI_DOUBLE, 2, MPI_COMM_WORLD);
            whole[rank] = large;
            int[] prefix = rank == 0 ? [1, 2, 3, 4] : [-rank, -rank, -rank, -rank];
            MPI_Bcast(prefix, 2, MPI_INT, 0, MPI_COMM_WORLD);
            prefixes[rank] = prefix;
        }, Bounded);

        Assert.All(whole, w => Assert.True(w.Select((x, i) => x == i * 0.5).All(equal => equal)));
        Assert.Equal([[1, 2, 3, 4], [1, 2, -1, -1], [1, 2, -2, -2]], prefixes);
    }

    [Fact]
    public void MPI_Bcast_CountsDiffer_ThrowsInvalidCountNamingBoth()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var buffer = new int[4];
            MPI_Bcast(buffer, rank == 0 ? 3 : 4, MPI_INT, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Bcast: the root sent 3 elements; 4 items of MPI_INT (Int32) here hold 4", error.Message);
    }

    [Fact]
    public void MPI_Allgather_TwoPerRank_EveryRankHoldsAllBlocksInRankOrder()
    {
        var results = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] mine = [rank, -rank, 99], all = new int[7];
            MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
            results[rank] = all;
        }, Bounded);

        Assert.All(results, r => Assert.Equal([0, 0, 1, -1, 2, -2, 0], r));
    }

    [Fact]
    public void MPI_Allgatherv_UnevenCountsAndGaps_BlocksLandAtTheirDisplacements()
    {
        var results = new double[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] counts = [1, 0, 3], displs = [5, 0, 1];
            var mine = Enumerable.Range(0, counts[rank]).Select(i => rank * 10.0 + i).ToArray();
            var all = Enumerable.Repeat(-1.0, 6).ToArray();
            MPI_Allgatherv(mine, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
            results[rank] = all;
        }, Bounded);

        Assert.All(results, r => Assert.Equal([-1, 20, 21, 22, -1, 0], r));
    }

    [Fact]
    public void MPI_Gatherv_UnevenCountsReversedDisplacements_RootHoldsBlocksWhereAsked()
    {
        int[]? gathered = null;
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // Rank r sends r + 1 copies of r; the root (rank 2) stores rank 3's block first and rank 0's last.
            var mine = Enumerable.Repeat(rank, rank + 1).ToArray();
            int[] counts = [1, 2, 3, 4], displs = [10, 7, 4, 0];
            var recv = rank == 2 ? Enumerable.Repeat(-1, 11).ToArray() : null;
            MPI_Gatherv(mine, rank + 1, MPI_INT, recv, rank == 2 ? counts : null, rank == 2 ? displs : null, MPI_INT, 2, MPI_COMM_WORLD);
            if (rank == 2) gathered = recv;
        }, Bounded);

        Assert.Equal([3, 3, 3, 3, 2, 2, 2, 1, 1, -1, 0], gathered!);
    }

    [Fact]
    public void MPI_Scatterv_CountsOnlyAtRoot_EachRankGetsItsSliceFromItsDisplacement()
    {
        var received = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[]? send = rank == 0 ? [0, 1, 2, 3, 4, 5, 6, 7] : null;
            int[]? counts = rank == 0 ? [2, 3, 1] : null, displs = rank == 0 ? [6, 0, 3] : null;
            var recv = Enumerable.Repeat(-1, 4).ToArray();
            MPI_Scatterv(send, counts, displs, MPI_INT, recv, new[] { 2, 3, 1 }[rank], MPI_INT, 0, MPI_COMM_WORLD);
            received[rank] = recv;
        }, Bounded);

        Assert.Equal([[6, 7, -1, -1], [0, 1, 2, -1], [3, -1, -1, -1]], received);
    }

    [Fact]
    public void MPI_Scatterv_DisplacementPastTheBuffer_ThrowsInvalidCountNamingTheBlock()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            int[] send = [1, 2], recv = new int[2];
            MPI_Scatterv(send, [2], [1], MPI_INT, recv, 2, MPI_INT, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Scatterv: rank 0's block of 2 elements at displacement 1 does not fit the buffer of 2 elements", error.Message);
    }

    [Fact]
    public void MPI_Alltoall_TwoPerPair_BlockJOfRankIArrivesAsBlockIOfRankJ()
    {
        var results = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // Block j of rank i holds (10 i + j, -(10 i + j)).
            var send = Enumerable.Range(0, 3).SelectMany(j => new[] { 10 * rank + j, -(10 * rank + j) }).ToArray();
            var recv = new int[6];
            MPI_Alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, MPI_COMM_WORLD);
            results[rank] = recv;
        }, Bounded);

        for (int j = 0; j < 3; j++)
            Assert.Equal(Enumerable.Range(0, 3).SelectMany(i => new[] { 10 * i + j, -(10 * i + j) }), results[j]);
    }

    [Fact]
    public void MPI_Alltoallv_RankSendsJPlusOneToRankJ_EveryBlockAtItsReceiveDisplacement()
    {
        var results = new long[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // Rank i sends j + 1 copies of 10 i + j to rank j, packed from the end of its buffer backwards.
            int[] sendcounts = [1, 2, 3], sdispls = [5, 3, 0];
            var send = new long[6];
            for (int j = 0; j < 3; j++) Array.Fill(send, 10 * rank + j, sdispls[j], sendcounts[j]);
            // Rank j receives rank + 1 elements from each rank, rank i's at 4 i, in a buffer with gaps.
            int[] recvcounts = Enumerable.Repeat(rank + 1, 3).ToArray(), rdispls = [0, 4, 8];
            var recv = Enumerable.Repeat(-1L, 12).ToArray();
            MPI_Alltoallv(send, sendcounts, sdispls, MPI_LONG, recv, recvcounts, rdispls, MPI_LONG, MPI_COMM_WORLD);
            results[rank] = recv;
        }, Bounded);

        Assert.Equal([0, -1, -1, -1, 10, -1, -1, -1, 20, -1, -1, -1], results[0]);
        Assert.Equal([1, 1, -1, -1, 11, 11, -1, -1, 21, 21, -1, -1], results[1]);
        Assert.Equal([2, 2, 2, -1, 12, 12, 12, -1, 22, 22, 22, -1], results[2]);
    }

    [Fact]
    public void MPI_Scan_AndExscan_PrefixSumsOfRanksLeaveRankZerosExscanAlone()
    {
        var inclusive = new int[4][];
        var exclusive = new int[4][];
        var values = new (double Scan, double Exscan)[4];
        Environment.Run(4, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            int[] mine = [rank + 1, 1], scan = new int[2], exscan = [-7, -7];
            MPI_Scan(mine, scan, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Exscan(mine, exscan, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            (inclusive[rank], exclusive[rank]) = (scan, exscan);
            double x = rank + 1, s = 0, e = -7;
            MPI_Scan(ref x, ref s, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
            MPI_Exscan(ref x, ref e, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
            values[rank] = (s, e);
        }, Bounded);

        Assert.Equal([[1, 1], [3, 2], [6, 3], [10, 4]], inclusive);
        Assert.Equal([[-7, -7], [1, 1], [3, 2], [6, 3]], exclusive);
        Assert.Equal([(1, -7), (2, 1), (6, 2), (24, 6)], values);
    }

    [Fact]
    public void MPI_Reduce_scatter_UnevenCounts_EachRankGetsItsBlockOfTheSum()
    {
        var results = new int[3][];
        var blocks = new int[3][];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            // Element k of every rank's send buffer is k + rank, so the sum's element k is 3 k + 3.
            var send = Enumerable.Range(0, 6).Select(k => k + rank).ToArray();
            var recv = Enumerable.Repeat(-1, 3).ToArray();
            MPI_Reduce_scatter(send, recv, [3, 1, 2], MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            results[rank] = recv;
            var block = new int[2];
            MPI_Reduce_scatter_block(send, block, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            blocks[rank] = block;
        }, Bounded);

        Assert.Equal([[3, 6, 9], [12, -1, -1], [15, 18, -1]], results);
        Assert.Equal([[2, 3], [4, 5], [6, 7]], blocks);
    }

    [Fact]
    public void MPI_Allgather_SendcountNotRecvcount_ThrowsInvalidCount()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            int[] send = [1, 2], recv = new int[2];
            MPI_Allgather(send, 2, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Allgather: this rank's block is 2 elements on the sending side but 1 on the receiving side", error.Message);
    }

    [Fact]
    public void MPI_Scatter_RecvtypeNotTheBuffersType_ThrowsTypeMismatch()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            int[] send = [1], recv = new int[1];
            MPI_Scatter(send, 1, MPI_INT, recv, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        }, Bounded));

        Assert.Contains("MPI_Scatter: the buffer holds Int32 but the datatype is MPI_DOUBLE (Double)", error.Message);
    }
}
