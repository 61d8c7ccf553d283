namespace Pmpi.Classic.Tests;

/// <summary>MPI_Cart_create, MPI_Graph_create and the neighbourhood collectives on them, as C programs call them.</summary>
public sealed class TopologyTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Cart_create_TwoByTwoWithRowsPeriodic_CoordinatesShiftsAndRanksAsInC()
    {
        var observed = new (int[] Coords, int Left, int Right, int Up, int Down, int Back)[4];
        int[] dims = [0, 0];
        Environment.Run(4, _ =>
        {
            MPI_Comm_size(MPI_COMM_WORLD, out int size);
            var mine = new int[2];
            MPI_Dims_create(size, 2, mine);
            dims = mine;
            MPI_Cart_create(MPI_COMM_WORLD, 2, mine, [false, true], false, out var grid);
            MPI_Comm_rank(grid!, out int rank);
            var coords = new int[2];
            MPI_Cart_coords(grid!, rank, 2, coords);
            MPI_Cart_shift(grid!, 1, 1, out int left, out int right);
            MPI_Cart_shift(grid!, 0, 1, out int up, out int down);
            MPI_Cart_rank(grid!, coords, out int back);
            MPI_Cartdim_get(grid!, out int ndims);
            int[] gotDims = new int[2], gotCoords = new int[2];
            bool[] gotPeriods = new bool[2];
            MPI_Cart_get(grid!, 2, gotDims, gotPeriods, gotCoords);
            Assert.Equal(2, ndims);
            Assert.Equal([2, 2], gotDims);
            Assert.Equal([false, true], gotPeriods);
            Assert.Equal(coords, gotCoords);
            observed[rank] = (coords, left, right, up, down, back);
        }, Bounded);

        Assert.Equal([2, 2], dims);
        Assert.Equal([0, 1], observed[1].Coords);
        Assert.Equal((0, 0, MPI_PROC_NULL, 3, 1), (observed[1].Left, observed[1].Right, observed[1].Up, observed[1].Down, observed[1].Back));
        Assert.Equal([1, 0], observed[2].Coords);
        Assert.Equal((3, 3, 0, MPI_PROC_NULL, 2), (observed[2].Left, observed[2].Right, observed[2].Up, observed[2].Down, observed[2].Back));
    }

    [Fact]
    public void MPI_Cart_create_GridSmallerThanTheCommunicator_RanksPastItGetCommNull()
    {
        var sizes = new int[3];
        Environment.Run(3, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            MPI_Cart_create(MPI_COMM_WORLD, 1, [2], [true], true, out var line);
            if (line == MPI_COMM_NULL) return;
            MPI_Comm_size(line!, out sizes[rank]);
        }, Bounded);

        Assert.Equal([2, 2, 0], sizes);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void MPI_Neighbor_alltoall_PeriodicRing_EachSlotGetsTheBlockItsNeighbourSentThisWay(int ranks)
    {
        var blocking = new int[ranks][];
        var nonblocking = new int[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Cart_create(MPI_COMM_WORLD, 1, [ranks], [true], false, out var ring);
            MPI_Comm_rank(ring!, out int rank);
            // Slot 0 is down (rank - 1), slot 1 up (rank + 1): rank r sends (10 r, -1) down and (10 r + 1, -2) up.
            int[] send = [10 * rank, -1, 10 * rank + 1, -2], received = new int[4], ireceived = new int[4];
            MPI_Neighbor_alltoall(send, 2, MPI_INT, received, 2, MPI_INT, ring!);
            MPI_Ineighbor_alltoall(send, 2, MPI_INT, ireceived, 2, MPI_INT, ring!, out var request);
            MPI_Wait(request, MPI_STATUS_IGNORE);
            (blocking[rank], nonblocking[rank]) = (received, ireceived);
        }, Bounded);

        for (int rank = 0; rank < ranks; rank++)
        {
            int down = (rank + ranks - 1) % ranks, up = (rank + 1) % ranks;
            // The down neighbour sent this rank its up block, the up neighbour its down block, even when one rank is both.
            Assert.Equal([10 * down + 1, -2, 10 * up, -1], blocking[rank]);
        }
        Assert.Equal(blocking, nonblocking);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void MPI_Neighbor_allgather_NonPeriodicLine_EdgeSlotsAreLeftAsTheyWere(int ranks)
    {
        var blocking = new double[ranks][];
        var nonblocking = new double[ranks][];
        Environment.Run(ranks, _ =>
        {
            MPI_Cart_create(MPI_COMM_WORLD, 1, [ranks], [false], false, out var line);
            MPI_Comm_rank(line!, out int rank);
            double[] mine = [rank, rank + 0.5, 99], received = [-1, -1, -1, -1], ireceived = [-1, -1, -1, -1];
            MPI_Neighbor_allgather(mine, 2, MPI_DOUBLE, received, 2, MPI_DOUBLE, line!);
            MPI_Ineighbor_allgather(mine, 2, MPI_DOUBLE, ireceived, 2, MPI_DOUBLE, line!, out var request);
            MPI_Waitall(1, [request], MPI_STATUSES_IGNORE);
            (blocking[rank], nonblocking[rank]) = (received, ireceived);
        }, Bounded);

        for (int rank = 0; rank < ranks; rank++)
        {
            double[] down = rank > 0 ? [rank - 1, rank - 0.5] : [-1, -1], up = rank < ranks - 1 ? [rank + 1, rank + 1.5] : [-1, -1];
            Assert.Equal([.. down, .. up], blocking[rank]);
        }
        Assert.Equal(blocking, nonblocking);
    }

    [Fact]
    public void MPI_Neighbor_allgatherv_AndAlltoallv_OnAStarGraphInCsForm_BlocksLandAtTheirDisplacements()
    {
        var gathered = new int[4][];
        var exchanged = new int[4][];
        var igathered = new int[4][];
        var iexchanged = new int[4][];
        var degrees = new int[4];
        Environment.Run(4, _ =>
        {
            // Rank 0 is the hub: its neighbours are 1, 2, 3; theirs, 0.
            int[] index = [3, 4, 5, 6], edges = [1, 2, 3, 0, 0, 0];
            MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, false, out var star);
            MPI_Comm_rank(star!, out int rank);
            MPI_Graph_neighbors_count(star!, rank, out int degree);
            var neighbours = new int[degree];
            MPI_Graph_neighbors(star!, rank, degree, neighbours);
            degrees[rank] = degree;
            // Each rank sends rank + 1 copies of its rank; slot i's block lands at 5 i.
            var mine = Enumerable.Repeat(rank, rank + 1).ToArray();
            var counts = neighbours.Select(n => n + 1).ToArray();
            int[] displs = [.. Enumerable.Range(0, degree).Select(i => 5 * i)];
            int[] all = Enumerable.Repeat(-1, 5 * degree).ToArray(), iall = (int[])all.Clone();
            MPI_Neighbor_allgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, star!);
            MPI_Ineighbor_allgatherv(mine, rank + 1, MPI_INT, iall, counts, displs, MPI_INT, star!, out var gather);
            // To slot i's neighbour n: n + 1 copies of 10 rank + n, from the back of the buffer.
            var sendcounts = counts;
            int[] sdispls = [.. Enumerable.Range(0, degree).Select(i => 4 * (degree - 1 - i))];
            var send = new int[4 * degree];
            for (int i = 0; i < degree; i++) Array.Fill(send, 10 * rank + neighbours[i], sdispls[i], sendcounts[i]);
            var recvcounts = Enumerable.Repeat(rank + 1, degree).ToArray();
            int[] back = Enumerable.Repeat(-1, 5 * degree).ToArray(), iback = (int[])back.Clone();
            MPI_Neighbor_alltoallv(send, sendcounts, sdispls, MPI_INT, back, recvcounts, displs, MPI_INT, star!);
            MPI_Ineighbor_alltoallv(send, sendcounts, sdispls, MPI_INT, iback, recvcounts, displs, MPI_INT, star!, out var exchange);
            MPI_Waitall(2, [gather, exchange], MPI_STATUSES_IGNORE);
            (gathered[rank], exchanged[rank], igathered[rank], iexchanged[rank]) = (all, back, iall, iback);
        }, Bounded);

        Assert.Equal([3, 1, 1, 1], degrees);
        Assert.Equal([1, 1, -1, -1, -1, 2, 2, 2, -1, -1, 3, 3, 3, 3, -1], gathered[0]);
        Assert.Equal([0, -1, -1, -1, -1], gathered[2]);
        Assert.Equal([10, -1, -1, -1, -1, 20, -1, -1, -1, -1, 30, -1, -1, -1, -1], exchanged[0]);
        Assert.Equal([2, 2, 2, -1, -1], exchanged[2]);
        Assert.Equal(gathered, igathered);
        Assert.Equal(exchanged, iexchanged);
    }

    [Fact]
    public void MPI_Neighbor_alltoall_ReceiveBufferTooSmall_ThrowsInvalidCountNamingTheCall()
    {
        var error = Assert.Throws<MpiException>(() => Environment.Run(1, _ =>
        {
            MPI_Cart_create(MPI_COMM_WORLD, 1, [1], [true], false, out var ring);
            int[] send = [1, 2], received = new int[1];
            MPI_Neighbor_alltoall(send, 1, MPI_INT, received, 1, MPI_INT, ring!);
        }, Bounded));

        Assert.Contains("MPI_Neighbor_alltoall: the receive buffer holds 1 elements; 2 are needed", error.Message);
    }
}
