namespace Pmpi.Classic;

/// <summary>
/// A nonblocking operation (MPI_Request), completed by MPI_Wait or found complete by MPI_Test; or a persistent one
/// (MPI_Send_init, MPI_Allreduce_init, ...), inactive until MPI_Start and inactive again once completed. What the
/// operation received reaches the caller's buffer when a wait or test finds it complete.
/// </summary>
public sealed class MPI_Request
{
    private readonly Request? _operation;
    private readonly Action<int>? _onCompletion;
    private readonly Func<MPI_Request>? _start;
    private readonly bool _isCollective;
    private CompletedStatus? _completed;
    private MPI_Request? _round;

    internal MPI_Request(Request request, Type? elementType, Action<int>? onCompletion)
        : this(request, elementType, onCompletion, isCollective: false)
    {
    }

    private MPI_Request(Request request, Type? elementType, Action<int>? onCompletion, bool isCollective)
    {
        _operation = request;
        ElementType = elementType;
        _onCompletion = onCompletion;
        _isCollective = isCollective;
    }

    // Each round is a nonblocking request of this face, not Core's PersistentRequest: MPI_Waitany finds a round
    // complete through RequestList, which would complete Core's persistent request and drop the status (source, tag,
    // count) a ported MPI_Status needs.
    private MPI_Request(Func<MPI_Request> start, Type? elementType)
    {
        _start = start;
        ElementType = elementType;
    }

    /// <summary>A persistent request, inactive; each MPI_Start calls <paramref name="start"/> for the round's nonblocking request.</summary>
    internal static MPI_Request Persistent(Func<MPI_Request> start, Type? elementType) => new(start, elementType);

    /// <summary>A nonblocking collective's request; <paramref name="deliver"/> puts its result in the caller's buffers at completion.</summary>
    internal static MPI_Request Collective<TResult>(CollectiveRequest<TResult> operation, Type? elementType, Action<TResult>? deliver) =>
        new(operation, elementType, deliver is null ? null : _ => deliver(operation.Value), isCollective: true);

    /// <summary>The operation to wait for: the nonblocking one, or the active round of a persistent one (null when inactive).</summary>
    internal Request? Operation => _start is null ? _operation : _round?.Operation;

    internal Type? ElementType { get; }

    internal bool IsPersistent => _start is not null;

    /// <summary>Whether there is an operation to complete: always for a nonblocking request, once started for a persistent one.</summary>
    internal bool IsActive => _start is null || _round is not null;

    internal bool IsCollective => _round?.IsCollective ?? _isCollective;

    internal void Start(string call)
    {
        if (_start is null)
            throw new MpiException(ErrorClass.InvalidRequest, $"{call}: the request is not persistent; MPI_Send_init, MPI_Recv_init and the MPI_*_init collectives make requests to start.");
        if (_round is not null)
            throw new MpiException(ErrorClass.InvalidRequest, $"{call}: the persistent request is active; complete it by MPI_Wait or MPI_Test before starting it again.");
        _round = _start();
    }

    // Wait, Test and Complete are for an active request: the calls give an inactive one the empty status themselves.

    /// <summary>Waits for the active operation; a receive's data is in the caller's buffer once it returns. The request stays active.</summary>
    internal CompletedStatus Wait()
    {
        if (_start is not null) return _round!.Wait();
        if (_completed is { } done) return done;
        var completed = _operation!.Wait();
        _onCompletion?.Invoke(completed.Count());
        _completed = completed;
        return completed;
    }

    /// <summary>As <see cref="Wait"/> when the active operation has completed, otherwise null. Never blocks.</summary>
    internal CompletedStatus? Test()
    {
        if (_start is not null) return _round!.Test();
        return _completed ?? (_operation!.Test() is null ? null : Wait());
    }

    /// <summary>Waits for the active operation and, for a persistent request, makes it inactive (MPI-4.1 §3.9).</summary>
    internal CompletedStatus Complete()
    {
        var completed = Wait();
        _round = null;
        return completed;
    }

    /// <summary>
    /// Lets the active operation complete unobserved, as MPI_Request_free allows: a receive's data still reaches the
    /// caller's buffer. A collective's request cannot be freed until it completes (MPI-4.1 §6.12).
    /// </summary>
    internal void Free(string call)
    {
        if (!IsActive) return;
        if (IsCollective)
            throw new MpiException(ErrorClass.InvalidRequest, $"{call}: a collective's request cannot be freed while active; complete it by MPI_Wait or MPI_Test first.");
        var active = _round ?? this;
        _ = active.Operation!.WaitAsync().ContinueWith(_ => active.Wait(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
        _round = null;
    }
}
