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

    /// <summary>Copies the root's first <paramref name="count"/> elements of <paramref name="buffer"/> into every rank's.</summary>
    public static int MPI_Bcast<T>(T[] buffer, int count, MPI_Datatype datatype, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var shared = Prefix(buffer, count, datatype, nameof(MPI_Bcast));
        comm.Broadcast(ref shared, root);
        if (!ReferenceEquals(shared, buffer)) Array.Copy(shared, buffer, count);
        return MPI_SUCCESS;
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
        var result = comm.Reduce(Prefix(sendbuf, count, datatype, nameof(MPI_Reduce)), op.For<T>(), root);
        if (comm.Rank == root) Array.Copy(result!, Target(recvbuf, count, nameof(MPI_Reduce)), count);
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' values into the root's <paramref name="recvbuf"/> (C's <c>MPI_Reduce(&amp;x, &amp;y, 1, ...)</c>).</summary>
    public static int MPI_Reduce<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Reduce));
        var result = comm.Reduce(sendbuf, op.For<T>(), root);
        if (comm.Rank == root) recvbuf = result;
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' first <paramref name="count"/> elements element by element into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(T[] sendbuf, T[] recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        var result = comm.Allreduce(Prefix(sendbuf, count, datatype, nameof(MPI_Allreduce)), op.For<T>());
        Array.Copy(result, Target(recvbuf, count, nameof(MPI_Allreduce)), count);
        return MPI_SUCCESS;
    }

    /// <summary>Combines the ranks' values into every rank's <paramref name="recvbuf"/>.</summary>
    public static int MPI_Allreduce<T>(ref T sendbuf, ref T recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Intracommunicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(op);
        CheckOne<T>(count, datatype, nameof(MPI_Allreduce));
        recvbuf = comm.Allreduce(sendbuf, op.For<T>());
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
        var all = comm.Rank == root ? Prefix(sendbuf!, sendcount * comm.Size, sendtype, nameof(MPI_Scatter)) : null;
        var block = comm.ScatterFromFlattened(all, recvcount, root);
        Array.Copy(block, Target(recvbuf, recvcount, nameof(MPI_Scatter)), block.Length);
        return MPI_SUCCESS;
    }
}
