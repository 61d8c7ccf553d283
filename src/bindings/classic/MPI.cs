namespace Pmpi.Classic;

/// <summary>
/// MPI with the C and Fortran names, for porting MPI programs line by line: <c>using static Pmpi.Classic.MPI;</c> in
/// C#, <c>Imports Pmpi.Classic.MPI</c> in Visual Basic. Buffers are arrays, a single value is passed by reference
/// (C's <c>&amp;x</c>): <c>MPI_Send(ref x, 1, MPI_INT, dest, tag, MPI_COMM_WORLD)</c>. Every function returns
/// MPI_SUCCESS; as with MPI_ERRORS_ARE_FATAL, an error throws an <see cref="MpiException"/> that ends the job, naming
/// the call, rank and problem.
/// </summary>
public static class MPI
{
    private static readonly AsyncLocal<Environment?> Initialised = new();

    // ---- Constants ----

    /// <summary>The value every call returns.</summary>
    public const int MPI_SUCCESS = 0;

    /// <summary>Matches any source (MPI_ANY_SOURCE).</summary>
    public const int MPI_ANY_SOURCE = Communicator.AnySource;

    /// <summary>Matches any tag (MPI_ANY_TAG).</summary>
    public const int MPI_ANY_TAG = Communicator.AnyTag;

    /// <summary>No rank (MPI_PROC_NULL): sending to it does nothing, receiving from it returns at once.</summary>
    public const int MPI_PROC_NULL = Communicator.ProcNull;

    /// <summary>Pass where a status is not wanted.</summary>
    public static readonly MPI_Status? MPI_STATUS_IGNORE;

    /// <summary>All ranks of the job, as the calling rank sees them.</summary>
    public static Intracommunicator MPI_COMM_WORLD => Communicator.World;

    /// <summary>The calling rank alone.</summary>
    public static Intracommunicator MPI_COMM_SELF => Communicator.Self;

    // ---- Datatypes (C, then Fortran) ----

    /// <summary>C char, as .NET <see cref="char"/> (UTF-16).</summary>
    public static readonly MPI_Datatype MPI_CHAR = new(nameof(MPI_CHAR), typeof(char));
    /// <summary><see cref="byte"/>.</summary>
    public static readonly MPI_Datatype MPI_BYTE = new(nameof(MPI_BYTE), typeof(byte));
    /// <summary><see cref="short"/>.</summary>
    public static readonly MPI_Datatype MPI_SHORT = new(nameof(MPI_SHORT), typeof(short));
    /// <summary><see cref="int"/>.</summary>
    public static readonly MPI_Datatype MPI_INT = new(nameof(MPI_INT), typeof(int));
    /// <summary><see cref="uint"/>.</summary>
    public static readonly MPI_Datatype MPI_UNSIGNED = new(nameof(MPI_UNSIGNED), typeof(uint));
    /// <summary><see cref="long"/> (C long on 64-bit Unix).</summary>
    public static readonly MPI_Datatype MPI_LONG = new(nameof(MPI_LONG), typeof(long));
    /// <summary><see cref="long"/>.</summary>
    public static readonly MPI_Datatype MPI_LONG_LONG = new(nameof(MPI_LONG_LONG), typeof(long));
    /// <summary><see cref="ulong"/>.</summary>
    public static readonly MPI_Datatype MPI_UNSIGNED_LONG = new(nameof(MPI_UNSIGNED_LONG), typeof(ulong));
    /// <summary><see cref="float"/>.</summary>
    public static readonly MPI_Datatype MPI_FLOAT = new(nameof(MPI_FLOAT), typeof(float));
    /// <summary><see cref="double"/>.</summary>
    public static readonly MPI_Datatype MPI_DOUBLE = new(nameof(MPI_DOUBLE), typeof(double));
    /// <summary><see cref="bool"/>.</summary>
    public static readonly MPI_Datatype MPI_C_BOOL = new(nameof(MPI_C_BOOL), typeof(bool));
    /// <summary>Fortran INTEGER: <see cref="int"/>.</summary>
    public static readonly MPI_Datatype MPI_INTEGER = new(nameof(MPI_INTEGER), typeof(int));
    /// <summary>Fortran INTEGER*8: <see cref="long"/>.</summary>
    public static readonly MPI_Datatype MPI_INTEGER8 = new(nameof(MPI_INTEGER8), typeof(long));
    /// <summary>Fortran REAL: <see cref="float"/>.</summary>
    public static readonly MPI_Datatype MPI_REAL = new(nameof(MPI_REAL), typeof(float));
    /// <summary>Fortran DOUBLE PRECISION: <see cref="double"/>.</summary>
    public static readonly MPI_Datatype MPI_DOUBLE_PRECISION = new(nameof(MPI_DOUBLE_PRECISION), typeof(double));
    /// <summary>Fortran LOGICAL: <see cref="bool"/>.</summary>
    public static readonly MPI_Datatype MPI_LOGICAL = new(nameof(MPI_LOGICAL), typeof(bool));
    /// <summary>Fortran CHARACTER: <see cref="char"/>.</summary>
    public static readonly MPI_Datatype MPI_CHARACTER = new(nameof(MPI_CHARACTER), typeof(char));

    // ---- Reductions ----

    /// <summary>Sum.</summary>
    public static readonly MPI_Op MPI_SUM = Op(nameof(MPI_SUM), nameof(Operation<int>.Add));
    /// <summary>Product.</summary>
    public static readonly MPI_Op MPI_PROD = Op(nameof(MPI_PROD), nameof(Operation<int>.Multiply));
    /// <summary>Maximum.</summary>
    public static readonly MPI_Op MPI_MAX = Op(nameof(MPI_MAX), nameof(Operation<int>.Max));
    /// <summary>Minimum.</summary>
    public static readonly MPI_Op MPI_MIN = Op(nameof(MPI_MIN), nameof(Operation<int>.Min));
    /// <summary>Logical and.</summary>
    public static readonly MPI_Op MPI_LAND = Op(nameof(MPI_LAND), nameof(Operation<int>.LogicalAnd));
    /// <summary>Logical or.</summary>
    public static readonly MPI_Op MPI_LOR = Op(nameof(MPI_LOR), nameof(Operation<int>.LogicalOr));
    /// <summary>Logical exclusive or.</summary>
    public static readonly MPI_Op MPI_LXOR = Op(nameof(MPI_LXOR), nameof(Operation<int>.LogicalXor));
    /// <summary>Bitwise and.</summary>
    public static readonly MPI_Op MPI_BAND = Op(nameof(MPI_BAND), nameof(Operation<int>.BitwiseAnd));
    /// <summary>Bitwise or.</summary>
    public static readonly MPI_Op MPI_BOR = Op(nameof(MPI_BOR), nameof(Operation<int>.BitwiseOr));
    /// <summary>Bitwise exclusive or.</summary>
    public static readonly MPI_Op MPI_BXOR = Op(nameof(MPI_BXOR), nameof(Operation<int>.ExclusiveOr));

    // ---- Environment ----

    /// <summary>
    /// Initialises MPI, removing PMPI's arguments from <paramref name="args"/>: launched by <c>pmpi run</c> this
    /// process becomes its rank; inside <c>Environment.Run</c> the thread's rank is already initialised and this joins it.
    /// </summary>
    public static int MPI_Init(ref string[] args)
    {
        Initialised.Value = new Environment(ref args);
        return MPI_SUCCESS;
    }

    /// <summary>Finalizes what <see cref="MPI_Init"/> initialised (a barrier of the world, then the connections close).</summary>
    public static int MPI_Finalize()
    {
        Initialised.Value?.Dispose();
        Initialised.Value = null;
        return MPI_SUCCESS;
    }

    /// <summary>Whether MPI is initialised for the calling rank.</summary>
    public static int MPI_Initialized(out bool flag)
    {
        flag = Environment.Initialized;
        return MPI_SUCCESS;
    }

    /// <summary>The calling rank's rank in <paramref name="comm"/>.</summary>
    public static int MPI_Comm_rank(Communicator comm, out int rank)
    {
        ArgumentNullException.ThrowIfNull(comm);
        rank = comm.Rank;
        return MPI_SUCCESS;
    }

    /// <summary>The number of ranks in <paramref name="comm"/>.</summary>
    public static int MPI_Comm_size(Communicator comm, out int size)
    {
        ArgumentNullException.ThrowIfNull(comm);
        size = comm.Size;
        return MPI_SUCCESS;
    }

    /// <summary>The name of the node this rank runs on, and its length.</summary>
    public static int MPI_Get_processor_name(out string name, out int resultlen)
    {
        name = Environment.ProcessorName;
        resultlen = name.Length;
        return MPI_SUCCESS;
    }

    /// <summary>Wall-clock seconds since an arbitrary origin.</summary>
    public static double MPI_Wtime() => Environment.Time;

    /// <summary>Aborts every rank of the job with <paramref name="errorcode"/>; does not return.</summary>
    public static int MPI_Abort(Communicator comm, int errorcode)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Abort(errorcode);
        return MPI_SUCCESS;
    }

    // ---- Point-to-point ----

    /// <summary>Sends the first <paramref name="count"/> elements of <paramref name="buf"/>.</summary>
    public static int MPI_Send<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Send(Prefix(buf, count, datatype, nameof(MPI_Send)), dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Sends one value (C's <c>MPI_Send(&amp;x, 1, ...)</c>).</summary>
    public static int MPI_Send<T>(ref T buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Send));
        comm.Send(buf, dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Receives at most <paramref name="count"/> elements into the front of <paramref name="buf"/>; a longer message is a Truncate error.</summary>
    public static int MPI_Recv<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var target = Prefix(buf, count, datatype, nameof(MPI_Recv));
        comm.Receive(source, tag, ref target, out CompletedStatus completed);
        if (!ReferenceEquals(target, buf)) Array.Copy(target, buf, completed.Count());
        Fill(status, completed, typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>Receives one value (C's <c>MPI_Recv(&amp;x, 1, ...)</c>).</summary>
    public static int MPI_Recv<T>(ref T buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Recv));
        comm.Receive(source, tag, out buf, out CompletedStatus completed);
        Fill(status, completed, typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>Starts a send of the first <paramref name="count"/> elements; <paramref name="buf"/> must not change until MPI_Wait.</summary>
    public static int MPI_Isend<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(comm);
        request = new MPI_Request(comm.ImmediateSend(Prefix(buf, count, datatype, nameof(MPI_Isend)), dest, tag), typeof(T), null);
        return MPI_SUCCESS;
    }

    /// <summary>Starts a receive into the first <paramref name="count"/> elements of <paramref name="buf"/>, complete at MPI_Wait.</summary>
    public static int MPI_Irecv<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var target = Prefix(buf, count, datatype, nameof(MPI_Irecv));
        request = new MPI_Request(comm.ImmediateReceive(source, tag, target), typeof(T),
            ReferenceEquals(target, buf) ? null : received => Array.Copy(target, buf, received));
        return MPI_SUCCESS;
    }

    /// <summary>Waits for <paramref name="request"/> to complete.</summary>
    public static int MPI_Wait(MPI_Request request, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(request);
        Fill(status, request.Wait(), request.ElementType);
        return MPI_SUCCESS;
    }

    /// <summary>Waits for the first <paramref name="count"/> requests to complete.</summary>
    public static int MPI_Waitall(int count, MPI_Request[] requests, MPI_Status[]? statuses)
    {
        ArgumentNullException.ThrowIfNull(requests);
        for (int i = 0; i < count; i++) MPI_Wait(requests[i], statuses?[i]);
        return MPI_SUCCESS;
    }

    /// <summary>The number of <paramref name="datatype"/> elements a receive delivered.</summary>
    public static int MPI_Get_count(MPI_Status status, MPI_Datatype datatype, out int count)
    {
        ArgumentNullException.ThrowIfNull(status);
        ArgumentNullException.ThrowIfNull(datatype);
        if (status.ElementType is { } type && type != datatype.ElementType)
            throw new MpiException(ErrorClass.TypeMismatch, $"MPI_Get_count: the receive delivered {type.Name} elements, not {datatype}.");
        count = status.Count;
        return MPI_SUCCESS;
    }

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

    // ---- Checks ----

    private static T[] Prefix<T>(T[] buf, int count, MPI_Datatype datatype, string call)
    {
        ArgumentNullException.ThrowIfNull(buf);
        CheckType<T>(datatype, call);
        if (count < 0 || count > buf.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} does not fit the buffer of {buf.Length} elements.");
        return count == buf.Length ? buf : buf[..count];
    }

    private static T[] Target<T>(T[]? buf, int count, string call)
    {
        ArgumentNullException.ThrowIfNull(buf);
        if (buf.Length < count) throw new MpiException(ErrorClass.InvalidCount, $"{call}: the receive buffer holds {buf.Length} elements; {count} are needed.");
        return buf;
    }

    private static void CheckOne<T>(int count, MPI_Datatype datatype, string call)
    {
        CheckType<T>(datatype, call);
        if (count != 1) throw new MpiException(ErrorClass.InvalidCount, $"{call}: a single value was passed by reference, so count must be 1, not {count}; pass an array for more.");
    }

    private static void CheckType<T>(MPI_Datatype datatype, string call)
    {
        ArgumentNullException.ThrowIfNull(datatype);
        if (datatype.ElementType != typeof(T))
            throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the buffer holds {typeof(T).Name} but the datatype is {datatype}.");
    }

    private static void Fill(MPI_Status? status, CompletedStatus completed, Type? elementType)
    {
        if (status is null) return;
        status.MPI_SOURCE = completed.Source;
        status.MPI_TAG = completed.Tag;
        status.MPI_ERROR = MPI_SUCCESS;
        status.Count = completed.Count();
        status.ElementType = elementType;
    }

    private static MPI_Op Op(string name, string operation) =>
        new(name, type => typeof(Operation<>).MakeGenericType(type).GetProperty(operation)!.GetValue(null)!);
}
