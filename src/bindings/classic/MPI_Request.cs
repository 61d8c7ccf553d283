namespace Pmpi.Classic;

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
