namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Grids and graphs ----

    /// <summary>
    /// Arranges <paramref name="comm_old"/>'s ranks as a grid of <paramref name="dims"/>, in row-major order
    /// (collective); <paramref name="periods"/> says which dimensions wrap around. As in C, the ranks past a grid
    /// smaller than the communicator get MPI_COMM_NULL. Ranks keep their order whatever <paramref name="reorder"/> says.
    /// </summary>
    public static int MPI_Cart_create(Intracommunicator comm_old, int ndims, int[] dims, bool[] periods, bool reorder, out CartesianCommunicator? comm_cart)
    {
        ArgumentNullException.ThrowIfNull(comm_old);
        ArgumentNullException.ThrowIfNull(dims);
        comm_cart = OnFirstRanks(comm_old, dims.Aggregate(1L, (product, extent) => product * extent),
            part => new CartesianCommunicator(part, ndims, dims, periods, reorder));
        return MPI_SUCCESS;
    }

    /// <summary>Fills the zero entries of <paramref name="dims"/> so that a grid of them holds <paramref name="nnodes"/> ranks, its extents as close as can be.</summary>
    public static int MPI_Dims_create(int nnodes, int ndims, int[] dims)
    {
        CartesianCommunicator.ComputeDimensions(nnodes, ndims, ref dims);
        return MPI_SUCCESS;
    }

    /// <summary>The number of dimensions of <paramref name="comm"/>'s grid.</summary>
    public static int MPI_Cartdim_get(CartesianCommunicator comm, out int ndims)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ndims = comm.Dimensions.Length;
        return MPI_SUCCESS;
    }

    /// <summary>The grid's extents and periods, and the calling rank's coordinates, into arrays of at least <paramref name="maxdims"/> entries.</summary>
    public static int MPI_Cart_get(CartesianCommunicator comm, int maxdims, int[] dims, bool[] periods, int[] coords)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentNullException.ThrowIfNull(periods);
        ArgumentNullException.ThrowIfNull(coords);
        CheckDimensions(comm, maxdims, nameof(MPI_Cart_get), dims.Length, periods.Length, coords.Length);
        comm.Dimensions.CopyTo(dims, 0);
        comm.Periodic.CopyTo(periods, 0);
        comm.Coordinates.CopyTo(coords, 0);
        return MPI_SUCCESS;
    }

    /// <summary>The rank at <paramref name="coords"/>; periodic dimensions wrap.</summary>
    public static int MPI_Cart_rank(CartesianCommunicator comm, int[] coords, out int rank)
    {
        ArgumentNullException.ThrowIfNull(comm);
        rank = comm.GetCartesianRank(coords);
        return MPI_SUCCESS;
    }

    /// <summary>The coordinates of <paramref name="rank"/>, into an array of at least <paramref name="maxdims"/> entries.</summary>
    public static int MPI_Cart_coords(CartesianCommunicator comm, int rank, int maxdims, int[] coords)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(coords);
        CheckDimensions(comm, maxdims, nameof(MPI_Cart_coords), coords.Length);
        comm.GetCartesianCoordinates(rank).CopyTo(coords, 0);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// The ranks <paramref name="disp"/> steps down and up along <paramref name="direction"/>: receive from
    /// <paramref name="rank_source"/>, send to <paramref name="rank_dest"/>; MPI_PROC_NULL off a non-periodic edge.
    /// </summary>
    public static int MPI_Cart_shift(CartesianCommunicator comm, int direction, int disp, out int rank_source, out int rank_dest)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Shift(direction, disp, out rank_source, out rank_dest);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Gives <paramref name="comm_old"/>'s first <paramref name="nnodes"/> ranks a graph (collective), in C's form:
    /// node i's neighbours are <paramref name="edges"/> from <paramref name="index"/>[i - 1] (0 for node 0) up to
    /// <paramref name="index"/>[i]. The ranks past the graph get MPI_COMM_NULL. Ranks keep their order whatever
    /// <paramref name="reorder"/> says.
    /// </summary>
    public static int MPI_Graph_create(Intracommunicator comm_old, int nnodes, int[] index, int[] edges, bool reorder, out GraphCommunicator? comm_graph)
    {
        ArgumentNullException.ThrowIfNull(comm_old);
        ArgumentNullException.ThrowIfNull(index);
        ArgumentNullException.ThrowIfNull(edges);
        if (nnodes < 0 || nnodes > index.Length)
            throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Graph_create: {nnodes} nodes need as many entries of index; it holds {index.Length}.");
        var neighbours = new int[nnodes][];
        for (int node = 0, from = 0; node < nnodes; from = index[node], node++)
        {
            if (index[node] < from || index[node] > edges.Length)
                throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Graph_create: index[{node}] is {index[node]}; each entry counts the edges so far, from {from} up to the {edges.Length} edges.");
            neighbours[node] = edges[from..index[node]];
        }
        comm_graph = OnFirstRanks(comm_old, nnodes, part => new GraphCommunicator(part, neighbours, reorder));
        return MPI_SUCCESS;
    }

    /// <summary>The number of neighbours of <paramref name="rank"/> in <paramref name="comm"/>'s graph.</summary>
    public static int MPI_Graph_neighbors_count(GraphCommunicator comm, int rank, out int nneighbors)
    {
        ArgumentNullException.ThrowIfNull(comm);
        nneighbors = comm.NeighborsOf(rank).Length;
        return MPI_SUCCESS;
    }

    /// <summary>The neighbours of <paramref name="rank"/>, into an array of at least <paramref name="maxneighbors"/> entries.</summary>
    public static int MPI_Graph_neighbors(GraphCommunicator comm, int rank, int maxneighbors, int[] neighbors)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(neighbors);
        var list = comm.NeighborsOf(rank);
        if (maxneighbors < list.Length || neighbors.Length < list.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"MPI_Graph_neighbors: rank {rank} has {list.Length} neighbours; maxneighbors is {maxneighbors} and the array holds {neighbors.Length}.");
        list.CopyTo(neighbors, 0);
        return MPI_SUCCESS;
    }

    // MPI-4.1 §8.5: the ranks past a smaller topology get MPI_COMM_NULL. Core's topologies take a communicator of
    // their size, so those ranks are split off first; a size that is not smaller is left for Core to check.
    private static TComm? OnFirstRanks<TComm>(Intracommunicator comm, long nodes, Func<Intracommunicator, TComm> create) where TComm : Intracommunicator
    {
        if (nodes <= 0 || nodes >= comm.Size) return create(comm);
        using var part = comm.Split(comm.Rank < nodes ? 0 : MPI_UNDEFINED, comm.Rank);
        return part is null ? null : create(part);
    }

    private static void CheckDimensions(CartesianCommunicator comm, int maxdims, string call, params int[] lengths)
    {
        int ndims = comm.Dimensions.Length;
        if (maxdims < ndims || lengths.Min() < ndims)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: the grid has {ndims} dimensions; maxdims is {maxdims} and the arrays hold [{string.Join(", ", lengths)}].");
    }

    // ---- Neighbourhood collectives (MPI-3): each rank exchanges with its neighbours only ----
    //
    // A rank's neighbours fill slots: two per dimension of a grid, down then up, or one per entry of its neighbour
    // list in a graph. The receive buffer holds a block per slot; a slot whose neighbour is MPI_PROC_NULL (off a
    // non-periodic edge) receives nothing and its block is left as it was (MPI-4.1 §8.6).

    /// <summary>Sends the first <paramref name="sendcount"/> elements to every neighbour; slot i's neighbour's arrive as the i-th block of <paramref name="recvcount"/> elements.</summary>
    public static int MPI_Neighbor_allgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, TopologicalCommunicator comm)
    {
        var (block, counts, place) = NeighborAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Neighbor_allgather));
        place(comm.NeighborAllgatherFlattened(block(), counts));
        return MPI_SUCCESS;
    }

    /// <summary>Sends the first <paramref name="sendcount"/> elements to every neighbour; slot i's neighbour's <paramref name="recvcounts"/>[i] arrive at <paramref name="displs"/>[i].</summary>
    public static int MPI_Neighbor_allgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, TopologicalCommunicator comm)
    {
        var (block, counts, place) = NeighborAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nameof(MPI_Neighbor_allgatherv));
        place(comm.NeighborAllgatherFlattened(block(), counts));
        return MPI_SUCCESS;
    }

    /// <summary>Sends the i-th block of <paramref name="sendcount"/> elements to slot i's neighbour; what it sent here arrives as the i-th block of <paramref name="recvcount"/>.</summary>
    public static int MPI_Neighbor_alltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, TopologicalCommunicator comm)
    {
        var (values, sendCounts, receiveCounts, place) = NeighborAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Neighbor_alltoall));
        place(comm.NeighborAlltoallFlattened(values(), sendCounts, receiveCounts));
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sends slot i's neighbour the <paramref name="sendcounts"/>[i] elements at <paramref name="sdispls"/>[i]; what it
    /// sent here, <paramref name="recvcounts"/>[i] elements, arrives at <paramref name="rdispls"/>[i].
    /// </summary>
    public static int MPI_Neighbor_alltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, TopologicalCommunicator comm)
    {
        var (values, sendCounts, receiveCounts, place) = NeighborAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nameof(MPI_Neighbor_alltoallv));
        place(comm.NeighborAlltoallFlattened(values(), sendCounts, receiveCounts));
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Neighbor_allgather; the blocks arrive when a wait or test completes the request.</summary>
    public static int MPI_Ineighbor_allgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, TopologicalCommunicator comm, out MPI_Request request)
    {
        var (block, counts, place) = NeighborAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Ineighbor_allgather));
        request = MPI_Request.Collective(comm.ImmediateNeighborAllgatherFlattened(block(), counts), typeof(T), place);
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Neighbor_allgatherv.</summary>
    public static int MPI_Ineighbor_allgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, TopologicalCommunicator comm, out MPI_Request request)
    {
        var (block, counts, place) = NeighborAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nameof(MPI_Ineighbor_allgatherv));
        request = MPI_Request.Collective(comm.ImmediateNeighborAllgatherFlattened(block(), counts), typeof(T), place);
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Neighbor_alltoall.</summary>
    public static int MPI_Ineighbor_alltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, TopologicalCommunicator comm, out MPI_Request request)
    {
        var (values, sendCounts, receiveCounts, place) = NeighborAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Ineighbor_alltoall));
        request = MPI_Request.Collective(comm.ImmediateNeighborAlltoallFlattened(values(), sendCounts, receiveCounts), typeof(T), place);
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Neighbor_alltoallv.</summary>
    public static int MPI_Ineighbor_alltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, TopologicalCommunicator comm, out MPI_Request request)
    {
        var (values, sendCounts, receiveCounts, place) = NeighborAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nameof(MPI_Ineighbor_alltoallv));
        request = MPI_Request.Collective(comm.ImmediateNeighborAlltoallFlattened(values(), sendCounts, receiveCounts), typeof(T), place);
        return MPI_SUCCESS;
    }

    // Each checks the arguments, then gives what this rank sends (the array every slot's neighbour gets, or the blocks
    // for all slots one after another), the counts Core's flattened form takes, and what puts the blocks received,
    // one after another by slot, at their places in the receive buffer.

    private static (Func<T[]> Block, int[] Counts, Action<T[]> Place) NeighborAllgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype,
        TopologicalCommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckBlock(sendcount, recvcount, call);
        var (counts, displs) = EvenBlocks(recvcount, Slots(comm).Length);
        Target(recvbuf, recvcount * counts.Length, call);
        return NeighborAllgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, comm, call);
    }

    private static (Func<T[]> Block, int[] Counts, Action<T[]> Place) NeighborAllgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype,
        TopologicalCommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var sources = Slots(comm);
        CheckPrefix(sendbuf, sendcount, sendtype, call);
        CheckType<T>(recvtype, call);
        CheckBlocks(recvcounts, displs, recvbuf, sources.Length, call, "neighbour slot");
        return (() => Prefix(sendbuf, sendcount, sendtype, call), recvcounts, received => PlaceNeighbors(received, sources, recvcounts, displs, recvbuf));
    }

    private static (Func<T[]> Values, int[] SendCounts, int[] ReceiveCounts, Action<T[]> Place) NeighborAlltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype,
        TopologicalCommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckBlock(sendcount, recvcount, call);
        int slots = Slots(comm).Length;
        CheckPrefix(sendbuf, sendcount * slots, sendtype, call);
        Target(recvbuf, recvcount * slots, call);
        var (sendcounts, sdispls) = EvenBlocks(sendcount, slots);
        var (recvcounts, rdispls) = EvenBlocks(recvcount, slots);
        return NeighborAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, call);
    }

    private static (Func<T[]> Values, int[] SendCounts, int[] ReceiveCounts, Action<T[]> Place) NeighborAlltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype,
        TopologicalCommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var sources = Slots(comm);
        CheckType<T>(sendtype, call);
        CheckType<T>(recvtype, call);
        CheckBlocks(sendcounts, sdispls, sendbuf, sources.Length, call, "neighbour slot");
        CheckBlocks(recvcounts, rdispls, recvbuf, sources.Length, call, "neighbour slot");
        return (() => [.. Enumerable.Range(0, sources.Length).SelectMany(slot => sendbuf.Skip(sdispls[slot]).Take(sendcounts[slot]))], sendcounts, recvcounts,
            received => PlaceNeighbors(received, sources, recvcounts, rdispls, recvbuf));
    }

    /// <summary>The rank each slot receives from: down then up along each dimension of a grid, the neighbour list of a graph.</summary>
    private static int[] Slots(TopologicalCommunicator comm)
    {
        if (comm is not CartesianCommunicator grid) return comm.Neighbors;
        var sources = new int[2 * grid.Dimensions.Length];
        for (int d = 0; d < sources.Length / 2; d++) grid.Shift(d, 1, out sources[2 * d], out sources[2 * d + 1]);
        return sources;
    }

    private static (int[] Counts, int[] Displs) EvenBlocks(int count, int slots) =>
        (Enumerable.Repeat(count, slots).ToArray(), [.. Enumerable.Range(0, slots).Select(slot => slot * count)]);

    // Core checked each block's length against its count; a slot without a neighbour keeps what the buffer held.
    private static void PlaceNeighbors<T>(T[] received, int[] sources, int[] counts, int[] displs, T[] buf)
    {
        for (int slot = 0, at = 0; slot < sources.Length; at += counts[slot], slot++)
            if (sources[slot] != MPI_PROC_NULL) Array.Copy(received, at, buf, displs[slot], counts[slot]);
    }
}
