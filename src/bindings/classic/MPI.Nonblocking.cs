namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Nonblocking collectives (MPI-3 MPI_I*) and persistent ones (MPI-4 MPI_*_init) ----
    //
    // Each checks its arguments once, as the blocking form does, and gets a function that starts one round, reading
    // the send buffer as it is then: MPI_Iallreduce calls it at once, MPI_Allreduce_init at every MPI_Start. A round
    // is Core's nonblocking collective, which runs in the communicator's order of collectives while the program
    // computes; its result reaches the receive buffer when MPI_Wait, MPI_Test or their all, any and some forms find it
    // complete. A value passed by reference cannot be written back later, so these take arrays (one element for C's &x).

    /// <summary>Starts a barrier, complete once every rank of <paramref name="comm"/> has started it.</summary>
    public static int MPI_Ibarrier(Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateBarrier(comm)();
        return MPI_SUCCESS;
    }

    /// <summary>Starts copying the root's first <paramref name="count"/> items of <paramref name="buffer"/> into every rank's.</summary>
    public static int MPI_Ibcast<T>(T[] buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateBroadcast(buffer, count, datatype, root, comm, nameof(MPI_Ibcast))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts combining the ranks' first <paramref name="count"/> elements element by element into the root's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Ireduce<T>(T[] sendbuf, T[]? recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateReduce(sendbuf, recvbuf, count, datatype, op, root, comm, nameof(MPI_Ireduce))();
        return MPI_SUCCESS;
    }

    /// <summary>At the root only: starts a reduction whose root input is the first <paramref name="count"/> elements of <paramref name="recvbuf"/>, which receives the result.</summary>
    public static int MPI_Ireduce<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateReduceInPlace(sendbuf, recvbuf, count, datatype, op, root, comm, nameof(MPI_Ireduce))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts combining the ranks' first <paramref name="count"/> elements element by element into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Iallreduce<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAllreduce(sendbuf, recvbuf, count, datatype, op, comm, nameof(MPI_Iallreduce))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts combining the ranks' first <paramref name="count"/> elements of <paramref name="recvbuf"/> into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Iallreduce<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        request = ImmediateAllreduce(recvbuf, recvbuf, count, datatype, op, comm, nameof(MPI_Iallreduce))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts concatenating every rank's first <paramref name="sendcount"/> elements, in rank order, into the root's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Igather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateGather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Igather))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Gatherv: rank i's elements land at <paramref name="displs"/>[i] of the root's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Igatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int[]? recvcounts, int[]? displs, MPI_Datatype recvtype, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateGatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nameof(MPI_Igatherv))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts giving rank i the i-th block of <paramref name="sendcount"/> elements of the root's <paramref name="sendbuf"/>.</summary>
    public static int MPI_Iscatter<T>(T[]? sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateScatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Iscatter))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Scatterv: rank i gets the <paramref name="sendcounts"/>[i] elements at <paramref name="displs"/>[i] of the root's <paramref name="sendbuf"/>.</summary>
    public static int MPI_Iscatterv<T>(T[]? sendbuf, int[]? sendcounts, int[]? displs, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateScatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Iscatterv))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts concatenating every rank's first <paramref name="sendcount"/> elements, in rank order, into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Iallgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Iallgather))();
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Starts an allgather whose blocks are already in place, the rank-th block of <paramref name="recvcount"/>
    /// elements of each rank's <paramref name="recvbuf"/>. <paramref name="sendcount"/> and <paramref name="sendtype"/> are ignored.
    /// </summary>
    public static int MPI_Iallgather<T>(MPI_InPlace sendbuf, int sendcount, MPI_Datatype? sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAllgatherInPlace(sendbuf, recvbuf, recvcount, recvtype, comm, nameof(MPI_Iallgather))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Allgatherv: rank i's elements land at <paramref name="displs"/>[i] of every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Iallgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nameof(MPI_Iallgatherv))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts sending the j-th block of <paramref name="sendcount"/> elements to rank j, rank i's block arriving as the i-th of <paramref name="recvbuf"/>.</summary>
    public static int MPI_Ialltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Ialltoall))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts an MPI_Alltoallv: blocks at displacements, each of its own count.</summary>
    public static int MPI_Ialltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, Intracommunicator comm, out MPI_Request request)
    {
        request = ImmediateAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nameof(MPI_Ialltoallv))();
        return MPI_SUCCESS;
    }

    // ---- Persistent collectives: bound to their buffers once, started by MPI_Start ----

    /// <summary>A barrier to start again and again.</summary>
    public static int MPI_Barrier_init(Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateBarrier(comm), null);
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Bcast to start again and again: each start sends the root's buffer as it is then.</summary>
    public static int MPI_Bcast_init<T>(T[] buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateBroadcast(buffer, count, datatype, root, comm, nameof(MPI_Bcast_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Reduce to start again and again: each start combines the send buffers as they are then.</summary>
    public static int MPI_Reduce_init<T>(T[] sendbuf, T[]? recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateReduce(sendbuf, recvbuf, count, datatype, op, root, comm, nameof(MPI_Reduce_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>At the root only: an in-place MPI_Reduce to start again and again, whose root input is <paramref name="recvbuf"/> as it is at each start.</summary>
    public static int MPI_Reduce_init<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateReduceInPlace(sendbuf, recvbuf, count, datatype, op, root, comm, nameof(MPI_Reduce_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Allreduce to start again and again: each start combines the send buffers as they are then.</summary>
    public static int MPI_Allreduce_init<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAllreduce(sendbuf, recvbuf, count, datatype, op, comm, nameof(MPI_Allreduce_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An in-place MPI_Allreduce to start again and again: each start combines <paramref name="recvbuf"/> as it is then.</summary>
    public static int MPI_Allreduce_init<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        _ = info;
        request = MPI_Request.Persistent(ImmediateAllreduce(recvbuf, recvbuf, count, datatype, op, comm, nameof(MPI_Allreduce_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Gather to start again and again.</summary>
    public static int MPI_Gather_init<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateGather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Gather_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Gatherv to start again and again.</summary>
    public static int MPI_Gatherv_init<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int[]? recvcounts, int[]? displs, MPI_Datatype recvtype, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateGatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nameof(MPI_Gatherv_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Scatter to start again and again.</summary>
    public static int MPI_Scatter_init<T>(T[]? sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateScatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Scatter_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Scatterv to start again and again.</summary>
    public static int MPI_Scatterv_init<T>(T[]? sendbuf, int[]? sendcounts, int[]? displs, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateScatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nameof(MPI_Scatterv_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Allgather to start again and again.</summary>
    public static int MPI_Allgather_init<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Allgather_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An in-place MPI_Allgather to start again and again: each start sends this rank's block of <paramref name="recvbuf"/> as it is then.</summary>
    public static int MPI_Allgather_init<T>(MPI_InPlace sendbuf, int sendcount, MPI_Datatype? sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAllgatherInPlace(sendbuf, recvbuf, recvcount, recvtype, comm, nameof(MPI_Allgather_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Allgatherv to start again and again.</summary>
    public static int MPI_Allgatherv_init<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nameof(MPI_Allgatherv_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Alltoall to start again and again.</summary>
    public static int MPI_Alltoall_init<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nameof(MPI_Alltoall_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>An MPI_Alltoallv to start again and again.</summary>
    public static int MPI_Alltoallv_init<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, Intracommunicator comm, MPI_Info? info, out MPI_Request request)
    {
        _ = info;
        request = MPI_Request.Persistent(ImmediateAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nameof(MPI_Alltoallv_init)), typeof(T));
        return MPI_SUCCESS;
    }

    // ---- Rounds: the checks of the blocking form, then a function that starts one ----

    private static Func<MPI_Request> ImmediateBarrier(Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        return () => MPI_Request.Collective(comm.ImmediateBarrier(), null, null);
    }

    private static Func<MPI_Request> ImmediateBroadcast<T>(T[] buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckPacked(buffer, count, datatype, call);
        return () =>
        {
            Action<int>? deliver = null;
            var target = comm.Rank == root ? Packed(buffer, count, datatype, call) : ReceiveTarget(buffer, count, datatype, call, out deliver);
            return MPI_Request.Collective(comm.ImmediateBroadcast(target, root), typeof(T), shared => Broadcasted(shared, target, count, datatype, deliver, call));
        };
    }

    private static Func<MPI_Request> ImmediateReduce<T>(T[] sendbuf, T[]? recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckPrefix(sendbuf, count, datatype, call);
        var operation = op.For<T>(datatype, call);
        var target = comm.Rank == root ? Target(recvbuf, count, call) : null;
        return () => MPI_Request.Collective(comm.ImmediateReduce(Prefix(sendbuf, count, datatype, call), operation, root), typeof(T),
            target is null ? null : result => Array.Copy(result!, target, count));
    }

    private static Func<MPI_Request> ImmediateReduceInPlace<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        ArgumentNullException.ThrowIfNull(comm);
        CheckRootInPlace(root, comm, call);
        return ImmediateReduce(recvbuf, recvbuf, count, datatype, op, root, comm, call);
    }

    private static Func<MPI_Request> ImmediateAllreduce<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckPrefix(sendbuf, count, datatype, call);
        var operation = op.For<T>(datatype, call);
        var target = Target(recvbuf, count, call);
        return () => MPI_Request.Collective(comm.ImmediateAllreduce(Prefix(sendbuf, count, datatype, call), operation), typeof(T),
            result => Array.Copy(result, target, count));
    }

    private static Func<MPI_Request> ImmediateGather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, call);
        CheckPrefix(sendbuf, sendcount, sendtype, call);
        if (comm.Rank != root) return () => MPI_Request.Collective(comm.ImmediateGatherFlattened(Prefix(sendbuf, sendcount, sendtype, call), [], root), typeof(T), null);
        var target = Target(recvbuf, recvcount * comm.Size, call);
        var counts = Enumerable.Repeat(recvcount, comm.Size).ToArray();
        return () => MPI_Request.Collective(comm.ImmediateGatherFlattened(Prefix(sendbuf, sendcount, sendtype, call), counts, root), typeof(T),
            gathered => Array.Copy(gathered!, target, gathered!.Length));
    }

    private static Func<MPI_Request> ImmediateGatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int[]? recvcounts, int[]? displs, MPI_Datatype recvtype, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckPrefix(sendbuf, sendcount, sendtype, call);
        if (comm.Rank != root) return () => MPI_Request.Collective(comm.ImmediateGatherFlattened(Prefix(sendbuf, sendcount, sendtype, call), [], root), typeof(T), null);
        CheckType<T>(recvtype, call);
        CheckBlocks(recvcounts, displs, recvbuf, comm.Size, call);
        CheckBlock(sendcount, recvcounts[root], call);
        return () => MPI_Request.Collective(comm.ImmediateGatherFlattened(Prefix(sendbuf, sendcount, sendtype, call), recvcounts, root), typeof(T),
            gathered => Place(gathered!, recvcounts, displs, recvbuf));
    }

    private static Func<MPI_Request> ImmediateScatter<T>(T[]? sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(sendtype, call);
        CheckType<T>(recvtype, call);
        bool isRoot = comm.Rank == root;
        if (isRoot) CheckPrefix(sendbuf, sendcount * comm.Size, sendtype, call);
        var target = Target(recvbuf, recvcount, call);
        var counts = Enumerable.Repeat(recvcount, comm.Size).ToArray();
        return () => MPI_Request.Collective(comm.ImmediateScatterFromFlattened(isRoot ? Prefix(sendbuf!, sendcount * comm.Size, sendtype, call) : null, counts, root), typeof(T),
            block => Array.Copy(block, target, block.Length));
    }

    private static Func<MPI_Request> ImmediateScatterv<T>(T[]? sendbuf, int[]? sendcounts, int[]? displs, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, call);
        var target = Target(recvbuf, recvcount, call);
        bool isRoot = comm.Rank == root;
        if (isRoot)
        {
            CheckType<T>(sendtype, call);
            CheckBlocks(sendcounts, displs, sendbuf, comm.Size, call);
        }
        return () =>
        {
            // As MPI_Scatterv, the root's counts go to all first. This rank's array is filled in place by the
            // broadcast before the scatter, which runs after it in the communicator's order, reads it.
            var counts = isRoot ? sendcounts! : new int[comm.Size];
            var sharing = comm.ImmediateBroadcast(counts, root);
            var scatter = comm.ImmediateScatterFromFlattened(isRoot ? Pack(sendbuf!, sendcounts!, displs!) : null, counts, root);
            return MPI_Request.Collective(scatter, typeof(T), block =>
            {
                sharing.Wait();
                CheckBlock(counts[comm.Rank], recvcount, call);
                Array.Copy(block, target, block.Length);
            });
        };
    }

    private static Func<MPI_Request> ImmediateAllgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckPrefix(sendbuf, sendcount, sendtype, call);
        CheckBlock(sendcount, recvcount, call);
        return ImmediateAllgather(() => Prefix(sendbuf, sendcount, sendtype, call), recvbuf, recvcount, recvtype, comm, call);
    }

    private static Func<MPI_Request> ImmediateAllgatherInPlace<T>(MPI_InPlace sendbuf, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        ArgumentNullException.ThrowIfNull(comm);
        return ImmediateAllgather(() => recvbuf[(comm.Rank * recvcount)..((comm.Rank + 1) * recvcount)], recvbuf, recvcount, recvtype, comm, call);
    }

    // The block this rank sends is taken at each start: a prefix of the send buffer, or its own block of the receive buffer in place.
    private static Func<MPI_Request> ImmediateAllgather<T>(Func<T[]> block, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        CheckType<T>(recvtype, call);
        var target = Target(recvbuf, recvcount * comm.Size, call);
        var counts = Enumerable.Repeat(recvcount, comm.Size).ToArray();
        return () => MPI_Request.Collective(comm.ImmediateAllgatherFlattened(block(), counts), typeof(T), gathered => Array.Copy(gathered, target, gathered.Length));
    }

    private static Func<MPI_Request> ImmediateAllgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckPrefix(sendbuf, sendcount, sendtype, call);
        CheckType<T>(recvtype, call);
        CheckBlocks(recvcounts, displs, recvbuf, comm.Size, call);
        CheckBlock(sendcount, recvcounts[comm.Rank], call);
        return () => MPI_Request.Collective(comm.ImmediateAllgatherFlattened(Prefix(sendbuf, sendcount, sendtype, call), recvcounts), typeof(T),
            gathered => Place(gathered, recvcounts, displs, recvbuf));
    }

    private static Func<MPI_Request> ImmediateAlltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, call);
        CheckBlock(sendcount, recvcount, call);
        CheckPrefix(sendbuf, sendcount * comm.Size, sendtype, call);
        var target = Target(recvbuf, recvcount * comm.Size, call);
        var counts = Enumerable.Repeat(sendcount, comm.Size).ToArray();
        return () => MPI_Request.Collective(comm.ImmediateAlltoallFlattened(Prefix(sendbuf, sendcount * comm.Size, sendtype, call), counts, counts), typeof(T),
            received => Array.Copy(received, target, received.Length));
    }

    private static Func<MPI_Request> ImmediateAlltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, Intracommunicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(sendtype, call);
        CheckType<T>(recvtype, call);
        CheckBlocks(sendcounts, sdispls, sendbuf, comm.Size, call);
        CheckBlocks(recvcounts, rdispls, recvbuf, comm.Size, call);
        return () => MPI_Request.Collective(comm.ImmediateAlltoallFlattened(Pack(sendbuf, sendcounts, sdispls), sendcounts, recvcounts), typeof(T),
            received => Place(received, recvcounts, rdispls, recvbuf));
    }
}
