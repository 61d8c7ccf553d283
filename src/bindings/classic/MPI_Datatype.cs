namespace Pmpi.Classic;

/// <summary>
/// An MPI datatype naming the .NET element type of a buffer (MPI_INT is <see cref="int"/>, MPI_DOUBLE_PRECISION is
/// <see cref="double"/>, ...). Every call checks it against the buffer, as a C compiler cannot.
/// </summary>
public sealed class MPI_Datatype
{
    internal MPI_Datatype(string name, Type elementType)
    {
        Name = name;
        ElementType = elementType;
    }

    /// <summary>The MPI name, e.g. MPI_INTEGER.</summary>
    public string Name { get; }

    /// <summary>The .NET type of the buffer's elements.</summary>
    public Type ElementType { get; }

    /// <summary>The MPI name and the .NET type.</summary>
    public override string ToString() => $"{Name} ({ElementType.Name})";
}

/// <summary>A predefined reduction (MPI_SUM, MPI_MAX, ...), applied to the element type of the buffer.</summary>
public sealed class MPI_Op
{
    private readonly Func<Type, object> _forType;

    internal MPI_Op(string name, Func<Type, object> forType)
    {
        Name = name;
        _forType = forType;
    }

    /// <summary>The MPI name, e.g. MPI_SUM.</summary>
    public string Name { get; }

    /// <summary>The MPI name.</summary>
    public override string ToString() => Name;

    internal ReductionOperation<T> For<T>() => (ReductionOperation<T>)_forType(typeof(T));
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

/// <summary>A started non-blocking operation (MPI_Request), completed by MPI_Wait or found complete by MPI_Test.</summary>
public sealed class MPI_Request
{
    private readonly Action<int>? _onCompletion;
    private CompletedStatus? _completed;

    internal MPI_Request(Request request, Type elementType, Action<int>? onCompletion)
    {
        Operation = request;
        ElementType = elementType;
        _onCompletion = onCompletion;
    }

    internal Request Operation { get; }

    internal Type ElementType { get; }

    // A receive into part of a buffer landed in a buffer of its own: copy it across once.
    internal CompletedStatus Wait()
    {
        if (_completed is { } done) return done;
        var completed = Operation.Wait();
        _onCompletion?.Invoke(completed.Count());
        _completed = completed;
        return completed;
    }

    internal CompletedStatus? Test() => _completed ?? (Operation.Test() is null ? null : Wait());
}
