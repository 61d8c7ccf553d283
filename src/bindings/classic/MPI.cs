using System.Diagnostics.CodeAnalysis;

namespace Pmpi.Classic;

/// <summary>
/// MPI with the C and Fortran names, for porting MPI programs line by line: <c>using static Pmpi.Classic.MPI;</c> in
/// C#, <c>Imports Pmpi.Classic.MPI</c> in Visual Basic. Buffers are arrays, a single value is passed by reference
/// (C's <c>&amp;x</c>): <c>MPI_Send(ref x, 1, MPI_INT, dest, tag, MPI_COMM_WORLD)</c>. Every function returns
/// MPI_SUCCESS; as with MPI_ERRORS_ARE_FATAL, an error throws an <see cref="MpiException"/> that ends the job, naming
/// the call, rank and problem. This file holds the constants, the environment and the checks; the calls are in
/// MPI.PointToPoint.cs, MPI.Requests.cs (waits, tests and starts), MPI.Collectives.cs, MPI.Nonblocking.cs (the
/// collectives' MPI_I* and MPI_*_init forms), MPI.Communicators.cs, MPI.Topologies.cs (grids, graphs and the
/// neighbourhood collectives), MPI.Operations.cs, MPI.Datatypes.cs and MPI.Errors.cs.
/// </summary>
public static partial class MPI
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

    /// <summary>The send buffer that says the input is in the receive buffer (MPI_Allreduce, MPI_Reduce at the root, MPI_Allgather, and their I and _init forms).</summary>
    public static readonly MPI_InPlace MPI_IN_PLACE = new();

    /// <summary>Pass where a status is not wanted.</summary>
    public static readonly MPI_Status? MPI_STATUS_IGNORE;

    /// <summary>Pass where an array of statuses is not wanted (MPI_Waitall, MPI_Testall).</summary>
    public static readonly MPI_Status?[]? MPI_STATUSES_IGNORE;

    /// <summary>No request: what MPI_Waitall, MPI_Waitany and their tests leave in place of a completed one.</summary>
    public static readonly MPI_Request? MPI_REQUEST_NULL;

    /// <summary>No hints, the info every MPI_*_init collective takes.</summary>
    public static readonly MPI_Info? MPI_INFO_NULL;

    /// <summary>No value: the index MPI_Waitany gives when no request was active, the color that leaves a rank out of MPI_Comm_split.</summary>
    public const int MPI_UNDEFINED = Intracommunicator.Undefined;

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

    /// <summary>No operation: what MPI_Op_free leaves.</summary>
    public static readonly MPI_Op? MPI_OP_NULL;

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

    // ---- Checks ----

    private static T[] Prefix<T>(T[] buf, int count, MPI_Datatype datatype, string call)
    {
        CheckPrefix(buf, count, datatype, call);
        return count == buf.Length ? buf : buf[..count];
    }

    private static void CheckPrefix<T>([NotNull] T[]? buf, int count, MPI_Datatype datatype, string call)
    {
        ArgumentNullException.ThrowIfNull(buf);
        CheckType<T>(datatype, call);
        if (count < 0 || count > buf.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} does not fit the buffer of {buf.Length} elements.");
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

    // Derived datatypes are taken by the calls that pack and unpack them (MPI.Datatypes.cs); the others name them.
    private static void CheckType<T>(MPI_Datatype datatype, string call)
    {
        CheckElementType<T>(datatype, call);
        if (datatype.Offsets is not null)
            throw new MpiException(ErrorClass.TypeMismatch, $"{call} takes a predefined datatype, not the derived {datatype}; MPI_Send, MPI_Ssend, MPI_Isend, MPI_Recv, MPI_Irecv, MPI_Sendrecv and MPI_Bcast take derived ones.");
    }

    private static void CheckElementType<T>(MPI_Datatype datatype, string call)
    {
        ArgumentNullException.ThrowIfNull(datatype);
        if (datatype.ElementType != typeof(T))
            throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the buffer holds {typeof(T).Name} but the datatype is {datatype}.");
        if (datatype.IsFreed) throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the datatype {datatype} was freed by MPI_Type_free.");
        if (!datatype.IsCommitted) throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the datatype {datatype} is not committed; call MPI_Type_commit first.");
    }

    private static void Fill(MPI_Status? status, CompletedStatus completed, Type? elementType)
    {
        if (status is null) return;
        status.MPI_SOURCE = completed.Source;
        status.MPI_TAG = completed.Tag;
        status.MPI_ERROR = MPI_SUCCESS;
        status.Count = completed.Count();
        status.ElementType = elementType;
        status.Probed = null;
    }

    // A probe knows the message but not the type it will be received as: MPI_Get_count asks the message. Probing
    // MPI_PROC_NULL finds an empty message from it at once (MPI-4.1 §3.8.1).
    private static void FillProbed(MPI_Status? status, Status? probed)
    {
        if (status is null) return;
        FillEmpty(status);
        if (probed is null)
        {
            status.MPI_SOURCE = MPI_PROC_NULL;
            return;
        }
        status.MPI_SOURCE = probed.Source;
        status.MPI_TAG = probed.Tag;
        status.Probed = probed;
    }

    // The empty status of MPI-4.1 §3.7.3, for a request that was MPI_REQUEST_NULL.
    private static void FillEmpty(MPI_Status? status)
    {
        if (status is null) return;
        status.MPI_SOURCE = MPI_ANY_SOURCE;
        status.MPI_TAG = MPI_ANY_TAG;
        status.MPI_ERROR = MPI_SUCCESS;
        status.Count = 0;
        status.ElementType = null;
        status.Probed = null;
    }

    private static MPI_Op Op(string name, string operation) =>
        new(name, isCommutative: true, isPredefined: true, (type, _, _) => typeof(Operation<>).MakeGenericType(type).GetProperty(operation)!.GetValue(null)!);
}
