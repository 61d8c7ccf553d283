namespace Pmpi.Classic;

/// <summary>
/// An MPI datatype naming the .NET element type of a buffer (MPI_INT is <see cref="int"/>, MPI_DOUBLE_PRECISION is
/// <see cref="double"/>, ...). Every call checks it against the buffer, as a C compiler cannot. A derived datatype
/// (MPI_Type_contiguous, MPI_Type_vector) names which elements of the buffer one item of it takes.
/// </summary>
public sealed class MPI_Datatype
{
    internal MPI_Datatype(string name, Type elementType)
        : this(name, elementType, null, 1)
    {
        IsCommitted = true;
    }

    private MPI_Datatype(string name, Type elementType, int[]? offsets, int extent)
    {
        Name = name;
        ElementType = elementType;
        Offsets = offsets;
        Extent = extent;
    }

    /// <summary>Where the elements of one item lie, counted in elements from its start; null for a predefined datatype, whose item is one element.</summary>
    internal int[]? Offsets { get; }

    /// <summary>How many elements one item spans: the next item of a count starts that far on (MPI's extent, in elements).</summary>
    internal int Extent { get; }

    /// <summary>How many elements one item takes.</summary>
    internal int Size => Offsets?.Length ?? 1;

    internal bool IsCommitted { get; set; }

    internal bool IsFreed { get; set; }

    /// <summary>The offset of the <paramref name="k"/>-th element of the <paramref name="item"/>-th item.</summary>
    internal int Offset(int item, int k) => item * Extent + (Offsets?[k] ?? 0);

    internal MPI_Datatype Derive(string name, int[] offsets, int extent) => new(name, ElementType, offsets, extent);

    /// <summary>The MPI name, e.g. MPI_INTEGER.</summary>
    public string Name { get; }

    /// <summary>The .NET type of the buffer's elements.</summary>
    public Type ElementType { get; }

    /// <summary>The MPI name and the .NET type.</summary>
    public override string ToString() => $"{Name} ({ElementType.Name})";
}

/// <summary>
/// A reduction: a predefined one (MPI_SUM, MPI_MAX, ...), applied to the element type of the buffer, or a user's
/// from MPI_Op_create, which applies to the element type it was created for.
/// </summary>
public sealed class MPI_Op
{
    private readonly Func<Type, MPI_Datatype, string, object> _forType;
    private bool _freed;

    internal MPI_Op(string name, bool isCommutative, bool isPredefined, Func<Type, MPI_Datatype, string, object> forType)
    {
        Name = name;
        IsCommutative = isCommutative;
        IsPredefined = isPredefined;
        _forType = forType;
    }

    /// <summary>The MPI name, e.g. MPI_SUM; for a user's operation, MPI_Op_create and its element type.</summary>
    public string Name { get; }

    internal bool IsCommutative { get; }

    internal bool IsPredefined { get; }

    /// <summary>The MPI name.</summary>
    public override string ToString() => Name;

    internal void Free() => _freed = true;

    internal ReductionOperation<T> For<T>(MPI_Datatype datatype, string call) => _freed
        ? throw new MpiException(ErrorClass.InvalidArgument, $"{call}: the operation {Name} was freed by MPI_Op_free.")
        : (ReductionOperation<T>)_forType(typeof(T), datatype, call);
}

/// <summary>
/// A user's reduction in C's form (MPI_User_function): combine <paramref name="invec"/> into <paramref name="inoutvec"/>
/// element by element, <c>inoutvec[i] = invec[i] op inoutvec[i]</c>, for the first <paramref name="len"/> elements;
/// <paramref name="invec"/> holds the lower ranks' values, so the operation need not commute.
/// </summary>
public delegate void MPI_User_function<T>(T[] invec, T[] inoutvec, int len, MPI_Datatype datatype);

/// <summary>
/// A user's function as Core's reduction of two values, in rank order. It is an instance method that calls the user's
/// delegate, so Core never takes it for a predefined operation, whatever the function computes.
/// </summary>
internal sealed class UserOperation<T>(MPI_User_function<T> function, MPI_Datatype datatype)
{
    public T Combine(T first, T second)
    {
        T[] invec = [first], inoutvec = [second];
        function(invec, inoutvec, 1, datatype);
        return inoutvec[0];
    }
}

/// <summary>What a receive matched (MPI_Status): fill one by passing it to MPI_Recv, or pass MPI_STATUS_IGNORE.</summary>
public sealed class MPI_Status
{
    /// <summary>The rank the message came from.</summary>
    public int MPI_SOURCE;

    /// <summary>The message's tag.</summary>
    public int MPI_TAG;

    /// <summary>MPI_SUCCESS: errors are exceptions that end the job (MPI_ERRORS_ARE_FATAL).</summary>
    public int MPI_ERROR;

    internal int Count;

    internal Type? ElementType;

    internal Status? Probed;
}

/// <summary>
/// Hints to an MPI call (MPI_Info), which the MPI-4 MPI_*_init collectives take: PMPI takes none, so there is no
/// MPI_Info to make; pass MPI_INFO_NULL.
/// </summary>
public sealed class MPI_Info
{
    private MPI_Info()
    {
    }
}

/// <summary>
/// The type of MPI_IN_PLACE, which passed as the send buffer of MPI_Allreduce, of MPI_Reduce at the root or of
/// MPI_Allgather (or of their nonblocking and persistent forms) says the input is already in the receive buffer.
/// </summary>
public sealed class MPI_InPlace
{
    internal MPI_InPlace()
    {
    }

    /// <summary>The MPI name.</summary>
    public override string ToString() => nameof(MPI.MPI_IN_PLACE);
}
