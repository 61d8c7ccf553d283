using System.Diagnostics.CodeAnalysis;

namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Collectives ----

    /// <summary>Returns once every rank of <paramref name="comm"/> has called it.</summary>
    public static int MPI_Barrier(Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Barrier();
        return MPI_SUCCESS;
    }

    /// <summary>Copies the root's first <paramref name="count"/> items of <paramref name="datatype"/> in <paramref name="buffer"/> into every rank's.</summary>
    public static int MPI_Bcast<T>(T[] buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        Action<int>? deliver = null;
        var target = comm.Rank == root ? Packed(buffer, count, datatype, nameof(MPI_Bcast)) : ReceiveTarget(buffer, count, datatype, nameof(MPI_Bcast), out deliver);
        var shared = target;
        comm.Broadcast(ref shared, root);
        Broadcasted(shared, target, count, datatype, deliver, nameof(MPI_Bcast));
        return MPI_SUCCESS;
    }

    // The broadcast fills a target of the root's length in place, and replaces any other.
    private static void Broadcasted<T>(T[] shared, T[] target, int count, MPI_Datatype datatype, Action<int>? deliver, string call)
    {
        if (shared.Length != count * datatype.Size)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: the root sent {shared.Length} elements; {count} items of {datatype} here hold {count * datatype.Size}.");
        if (!ReferenceEquals(shared, target)) Array.Copy(shared, target, shared.Length);
        deliver?.Invoke(shared.Length);
    }

    /// <summary>Copies the root's value into every rank's (C's <c>MPI_Bcast(&amp;x, 1, ...)</c>).</summary>
    public static int MPI_Bcast<T>(ref T buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Bcast));
        comm.Broadcast(ref buffer, root);
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' first <paramref name="count"/> elements element by element into the root's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Reduce<T>(T[] sendbuf, T[]? recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        var result = comm.Reduce(Prefix(sendbuf, count, datatype, nameof(MPI_Reduce)), op.For<T>(datatype, nameof(MPI_Reduce)), root);
        if (comm.Rank == root) Array.Copy(result!, Target(recvbuf, count, nameof(MPI_Reduce)), count);
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' values into the root's <paramref name="recvbuf"/> (C's <c>MPI_Reduce(&amp;x, &amp;y, 1, ...)</c>).</summary>
    public static int MPI_Reduce<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Reduce));
        var result = comm.Reduce(sendbuf, op.For<T>(datatype, nameof(MPI_Reduce)), root);
        if (comm.Rank == root) recvbuf = result;
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' first <paramref name="count"/> elements element by element into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        var result = comm.Allreduce(Prefix(sendbuf, count, datatype, nameof(MPI_Allreduce)), op.For<T>(datatype, nameof(MPI_Allreduce)));
        Array.Copy(result, Target(recvbuf, count, nameof(MPI_Allreduce)), count);
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' values into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Allreduce));
        recvbuf = comm.Allreduce(sendbuf, op.For<T>(datatype, nameof(MPI_Allreduce)));
        return MPI_SUCCESS;
    }

    /// <summary>Concatenates every rank's first <paramref name="sendcount"/> elements, in rank order, into the root's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Gather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, nameof(MPI_Gather));
        var gathered = comm.GatherFlattened(Prefix(sendbuf, sendcount, sendtype, nameof(MPI_Gather)), root);
        if (comm.Rank == root) Array.Copy(gathered!, Target(recvbuf, recvcount * comm.Size, nameof(MPI_Gather)), gathered!.Length);
        return MPI_SUCCESS;
    }

    /// <summary>Gives rank i the i-th block of <paramref name="sendcount"/> elements of the root's <paramref name="sendbuf"/>.</summary>
    public static int MPI_Scatter<T>(T[]? sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(sendtype, nameof(MPI_Scatter));
        CheckType<T>(recvtype, nameof(MPI_Scatter));
        var all = comm.Rank == root ? Prefix(sendbuf!, sendcount * comm.Size, sendtype, nameof(MPI_Scatter)) : null;
        var block = comm.ScatterFromFlattened(all, recvcount, root);
        Array.Copy(block, Target(recvbuf, recvcount, nameof(MPI_Scatter)), block.Length);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Concatenates every rank's first <paramref name="sendcount"/> elements, in rank order, into every rank's
    /// <paramref name="recvbuf"/>, a block of <paramref name="recvcount"/> elements per rank.
    /// </summary>
    public static int MPI_Allgather<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, nameof(MPI_Allgather));
        CheckBlock(sendcount, recvcount, nameof(MPI_Allgather));
        var gathered = comm.AllgatherFlattened(Prefix(sendbuf, sendcount, sendtype, nameof(MPI_Allgather)), recvcount);
        Array.Copy(gathered, Target(recvbuf, recvcount * comm.Size, nameof(MPI_Allgather)), gathered.Length);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Gathers every rank's first <paramref name="sendcount"/> elements into every rank's <paramref name="recvbuf"/>:
    /// rank i's <paramref name="recvcounts"/>[i] elements at <paramref name="displs"/>[i].
    /// </summary>
    public static int MPI_Allgatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] displs, MPI_Datatype recvtype, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, nameof(MPI_Allgatherv));
        CheckBlocks(recvcounts, displs, recvbuf, comm.Size, nameof(MPI_Allgatherv));
        CheckBlock(sendcount, recvcounts[comm.Rank], nameof(MPI_Allgatherv));
        Place(comm.AllgatherFlattened(Prefix(sendbuf, sendcount, sendtype, nameof(MPI_Allgatherv)), recvcounts), recvcounts, displs, recvbuf);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Gathers every rank's first <paramref name="sendcount"/> elements into the root's <paramref name="recvbuf"/>:
    /// rank i's <paramref name="recvcounts"/>[i] elements at <paramref name="displs"/>[i]. The receive arguments
    /// count only at the root; others may pass null.
    /// </summary>
    public static int MPI_Gatherv<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[]? recvbuf, int[]? recvcounts, int[]? displs, MPI_Datatype recvtype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var values = Prefix(sendbuf, sendcount, sendtype, nameof(MPI_Gatherv));
        if (comm.Rank != root)
        {
            comm.GatherFlattened(values, [], root);
            return MPI_SUCCESS;
        }
        CheckType<T>(recvtype, nameof(MPI_Gatherv));
        CheckBlocks(recvcounts, displs, recvbuf, comm.Size, nameof(MPI_Gatherv));
        CheckBlock(sendcount, recvcounts[root], nameof(MPI_Gatherv));
        Place(comm.GatherFlattened(values, recvcounts, root)!, recvcounts, displs, recvbuf);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Gives rank i the <paramref name="sendcounts"/>[i] elements at <paramref name="displs"/>[i] of the root's
    /// <paramref name="sendbuf"/>, into the front of its <paramref name="recvbuf"/>. The send arguments count only at
    /// the root; others may pass null.
    /// </summary>
    public static int MPI_Scatterv<T>(T[]? sendbuf, int[]? sendcounts, int[]? displs, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, nameof(MPI_Scatterv));
        T[]? packed = null;
        if (comm.Rank == root)
        {
            CheckType<T>(sendtype, nameof(MPI_Scatterv));
            CheckBlocks(sendcounts, displs, sendbuf, comm.Size, nameof(MPI_Scatterv));
            packed = Pack(sendbuf, sendcounts, displs);
        }
        // Core splits by counts on every rank; C passes them at the root only, so the root's go to all.
        var counts = sendcounts ?? [];
        comm.Broadcast(ref counts, root);
        CheckBlock(counts[comm.Rank], recvcount, nameof(MPI_Scatterv));
        var block = comm.ScatterFromFlattened(packed, counts, root);
        Array.Copy(block, Target(recvbuf, recvcount, nameof(MPI_Scatterv)), block.Length);
        return MPI_SUCCESS;
    }

    /// <summary>Sends the j-th block of <paramref name="sendcount"/> elements to rank j and receives rank i's block as the i-th of <paramref name="recvbuf"/>.</summary>
    public static int MPI_Alltoall<T>(T[] sendbuf, int sendcount, MPI_Datatype sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(recvtype, nameof(MPI_Alltoall));
        CheckBlock(sendcount, recvcount, nameof(MPI_Alltoall));
        var received = comm.AlltoallFlattened(Prefix(sendbuf, sendcount * comm.Size, sendtype, nameof(MPI_Alltoall)), sendcount);
        Array.Copy(received, Target(recvbuf, recvcount * comm.Size, nameof(MPI_Alltoall)), received.Length);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sends rank j the <paramref name="sendcounts"/>[j] elements at <paramref name="sdispls"/>[j] and receives rank
    /// i's <paramref name="recvcounts"/>[i] elements at <paramref name="rdispls"/>[i].
    /// </summary>
    public static int MPI_Alltoallv<T>(T[] sendbuf, int[] sendcounts, int[] sdispls, MPI_Datatype sendtype, T[] recvbuf, int[] recvcounts, int[] rdispls, MPI_Datatype recvtype, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckType<T>(sendtype, nameof(MPI_Alltoallv));
        CheckType<T>(recvtype, nameof(MPI_Alltoallv));
        CheckBlocks(sendcounts, sdispls, sendbuf, comm.Size, nameof(MPI_Alltoallv));
        CheckBlocks(recvcounts, rdispls, recvbuf, comm.Size, nameof(MPI_Alltoallv));
        Place(comm.AlltoallFlattened(Pack(sendbuf, sendcounts, sdispls), sendcounts, recvcounts), recvcounts, rdispls, recvbuf);
        return MPI_SUCCESS;
    }

    // ---- In place ----

    /// <summary>Combines the ranks' first <paramref name="count"/> elements of <paramref name="recvbuf"/> element by element into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        return MPI_Allreduce(Prefix(recvbuf, count, datatype, nameof(MPI_Allreduce)), recvbuf, count, datatype, op, comm);
    }

    /// <summary>Combines the ranks' values of <paramref name="recvbuf"/> into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(MPI_InPlace sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        var value = recvbuf;
        return MPI_Allreduce(ref value, ref recvbuf, count, datatype, op, comm);
    }

    /// <summary>At the root only: the root's input is the first <paramref name="count"/> elements of <paramref name="recvbuf"/>, which receives the result.</summary>
    public static int MPI_Reduce<T>(MPI_InPlace sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        ArgumentNullException.ThrowIfNull(comm);
        CheckRootInPlace(root, comm, nameof(MPI_Reduce));
        return MPI_Reduce(Prefix(recvbuf, count, datatype, nameof(MPI_Reduce)), recvbuf, count, datatype, op, root, comm);
    }

    /// <summary>At the root only: the root's input is <paramref name="recvbuf"/>, which receives the result.</summary>
    public static int MPI_Reduce<T>(MPI_InPlace sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        ArgumentNullException.ThrowIfNull(comm);
        CheckRootInPlace(root, comm, nameof(MPI_Reduce));
        var value = recvbuf;
        return MPI_Reduce(ref value, ref recvbuf, count, datatype, op, root, comm);
    }

    /// <summary>
    /// Each rank's block is already in place, the rank-th block of <paramref name="recvcount"/> elements of its
    /// <paramref name="recvbuf"/>; every rank gets all blocks. <paramref name="sendcount"/> and <paramref name="sendtype"/> are ignored.
    /// </summary>
    public static int MPI_Allgather<T>(MPI_InPlace sendbuf, int sendcount, MPI_Datatype? sendtype, T[] recvbuf, int recvcount, MPI_Datatype recvtype, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(sendbuf);
        ArgumentNullException.ThrowIfNull(comm);
        var all = Target(recvbuf, recvcount * comm.Size, nameof(MPI_Allgather));
        var mine = all[(comm.Rank * recvcount)..((comm.Rank + 1) * recvcount)];
        return MPI_Allgather(mine, recvcount, recvtype, all, recvcount, recvtype, comm);
    }

    // MPI-4.1 §6.9.1: only the root passes MPI_IN_PLACE to MPI_Reduce; the others have no receive buffer to reduce in.
    private static void CheckRootInPlace(int root, Intracommunicator comm, string call)
    {
        if (comm.Rank != root)
            throw new MpiException(ErrorClass.InvalidArgument, $"{call}: MPI_IN_PLACE is the root's send buffer only; rank {comm.Rank} is not the root ({root}) and passes its own send buffer.");
    }

    // ---- Scans and reduce-scatter ----

    /// <summary>Rank i's <paramref name="recvbuf"/> gets the element-wise combination of ranks 0..i's first <paramref name="count"/> elements.</summary>
    public static int MPI_Scan<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        var result = comm.Scan(Prefix(sendbuf, count, datatype, nameof(MPI_Scan)), op.For<T>(datatype, nameof(MPI_Scan)));
        Array.Copy(result, Target(recvbuf, count, nameof(MPI_Scan)), count);
        return MPI_SUCCESS;
    }

    /// <summary>Rank i's <paramref name="recvbuf"/> gets the combination of ranks 0..i's values.</summary>
    public static int MPI_Scan<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Scan));
        recvbuf = comm.Scan(sendbuf, op.For<T>(datatype, nameof(MPI_Scan)));
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Rank i's <paramref name="recvbuf"/> gets the element-wise combination of ranks 0..i-1's first
    /// <paramref name="count"/> elements; rank 0's is left as it was (MPI leaves it undefined).
    /// </summary>
    public static int MPI_Exscan<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        var result = comm.ExclusiveScan(Prefix(sendbuf, count, datatype, nameof(MPI_Exscan)), op.For<T>(datatype, nameof(MPI_Exscan)));
        var target = Target(recvbuf, count, nameof(MPI_Exscan));
        if (comm.Rank != 0) Array.Copy(result, target, count);
        return MPI_SUCCESS;
    }

    /// <summary>Rank i's <paramref name="recvbuf"/> gets the combination of ranks 0..i-1's values; rank 0's is left as it was.</summary>
    public static int MPI_Exscan<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Exscan));
        var result = comm.ExclusiveScan(sendbuf, op.For<T>(datatype, nameof(MPI_Exscan)));
        if (comm.Rank != 0) recvbuf = result;
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Combines the ranks' first sum-of-<paramref name="recvcounts"/> elements element by element and gives rank i
    /// the i-th block, of <paramref name="recvcounts"/>[i] elements, in its <paramref name="recvbuf"/>.
    /// </summary>
    public static int MPI_Reduce_scatter<T>(T[] sendbuf, T[] recvbuf, int[] recvcounts, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        ArgumentNullException.ThrowIfNull(recvcounts);
        if (recvcounts.Length != comm.Size || Array.Exists(recvcounts, c => c < 0))
            throw new MpiException(ErrorClass.InvalidCount, $"MPI_Reduce_scatter: recvcounts must hold {comm.Size} non-negative counts, one per rank; it holds [{string.Join(", ", recvcounts)}].");
        var block = comm.ReduceScatter(Prefix(sendbuf, recvcounts.Sum(), datatype, nameof(MPI_Reduce_scatter)), op.For<T>(datatype, nameof(MPI_Reduce_scatter)), recvcounts);
        Array.Copy(block, Target(recvbuf, recvcounts[comm.Rank], nameof(MPI_Reduce_scatter)), block.Length);
        return MPI_SUCCESS;
    }

    /// <summary>MPI_Reduce_scatter with a block of <paramref name="recvcount"/> elements for every rank.</summary>
    public static int MPI_Reduce_scatter_block<T>(T[] sendbuf, T[] recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        return MPI_Reduce_scatter(sendbuf, recvbuf, Enumerable.Repeat(recvcount, comm.Size).ToArray(), datatype, op, comm);
    }

    // ---- Blocks at displacements (the v-collectives) ----

    // MPI requires matching type signatures; a send of other length than the receive's block would shift every later block.
    private static void CheckBlock(int sent, int expected, string call)
    {
        if (sent != expected)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: this rank's block is {sent} elements on the sending side but {expected} on the receiving side; they must match.");
    }

    // A block per rank, or per neighbour slot for the neighbourhood collectives (the owner).
    private static void CheckBlocks<T>([NotNull] int[]? counts, [NotNull] int[]? displs, [NotNull] T[]? buf, int size, string call, string owner = "rank")
    {
        ArgumentNullException.ThrowIfNull(counts);
        ArgumentNullException.ThrowIfNull(displs);
        ArgumentNullException.ThrowIfNull(buf);
        if (counts.Length != size || displs.Length != size)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: the counts and displacements must hold {size} entries, one per {owner}; they hold {counts.Length} and {displs.Length}.");
        for (int i = 0; i < size; i++)
        {
            if (counts[i] < 0 || displs[i] < 0 || (long)displs[i] + counts[i] > buf.Length)
                throw new MpiException(ErrorClass.InvalidCount, $"{call}: {owner} {i}'s block of {counts[i]} elements at displacement {displs[i]} does not fit the buffer of {buf.Length} elements.");
        }
    }

    // The blocks at their displacements, concatenated in rank order as Core's flattened collectives take them.
    private static T[] Pack<T>(T[] buf, int[] counts, int[] displs)
    {
        var packed = new T[counts.Sum()];
        for (int i = 0, at = 0; i < counts.Length; at += counts[i], i++) Array.Copy(buf, displs[i], packed, at, counts[i]);
        return packed;
    }

    private static void Place<T>(T[] flat, int[] counts, int[] displs, T[] buf)
    {
        for (int i = 0, at = 0; i < counts.Length; at += counts[i], i++) Array.Copy(flat, at, buf, displs[i], counts[i]);
    }
}
