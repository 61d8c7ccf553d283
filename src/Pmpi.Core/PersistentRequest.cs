using Pmpi.Devices;
using Pmpi.Matching;

namespace Pmpi;

/// <summary>
/// An operation bound to its arguments once and started any number of times (MPI_Send_init, MPI_Recv_init,
/// MPI_Allreduce_init, ...). Made inactive; <see cref="Start"/> runs it once, and waiting or a successful test makes
/// it inactive again. Waiting for or testing an inactive request returns an empty status at once (as MPI).
/// </summary>
public class PersistentRequest : Request
{
    private static readonly Completion Inactive = SendOperation.Done;

    private readonly Func<Request> _start;
    private Request? _active;

    internal PersistentRequest(Func<Request> start) => _start = start;

    /// <summary>Whether the request was started and has not been completed by a wait or test since.</summary>
    public bool IsActive => _active is not null;

    /// <summary>Starts the operation (MPI_Start); the request must not be active.</summary>
    public void Start()
    {
        if (_active is not null)
            throw new MpiException(ErrorClass.InvalidRequest, "This persistent request is active: wait for it or test it to completion before starting it again.");
        _active = _start();
    }

    /// <summary>Starts each request in order (MPI_Startall).</summary>
    public static void StartAll(params PersistentRequest[] requests) => StartAll((IEnumerable<PersistentRequest>)requests);

    /// <summary>Starts each request of a list in order (MPI_Startall).</summary>
    public static void StartAll(IEnumerable<PersistentRequest> requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        foreach (var request in requests) request.Start();
    }

    /// <inheritdoc/>
    public override CompletedStatus Wait()
    {
        if (_active is not { } active) return CompletedStatus.Empty;
        try
        {
            var status = active.Wait();
            Completed(active);
            return status;
        }
        finally
        {
            _active = null;
        }
    }

    /// <inheritdoc/>
    public override CompletedStatus? Test()
    {
        if (_active is not { } active) return CompletedStatus.Empty;
        if (active.Test() is not { } status) return null;
        _active = null;
        Completed(active);
        return status;
    }

    /// <summary>Cancels the active operation, as its nonpersistent form would be (a receive that has not matched yet).</summary>
    public override void Cancel() => _active?.Cancel();

    internal override Completion Completion => _active?.Completion ?? Inactive;

    internal override void Expedite() => _active?.Expedite();

    /// <summary>Takes what a completed round produced (a send produces nothing).</summary>
    private protected virtual void Completed(Request round)
    {
    }
}

/// <summary>A persistent operation whose every round produces a <typeparamref name="T"/>: a receive's value, a collective's result.</summary>
public sealed class PersistentRequest<T> : PersistentRequest
{
    private readonly Func<Request, T> _valueOf;
    private T _value = default!;

    internal PersistentRequest(Func<Request> start, Func<Request, T> valueOf)
        : base(start) => _valueOf = valueOf;

    internal PersistentRequest(Func<CollectiveRequest<T>> start)
        : this(start, round => ((CollectiveRequest<T>)round).Value)
    {
    }

    /// <summary>The value of the last completed round; waits for the active round first.</summary>
    public T Value
    {
        get
        {
            Wait();
            return _value;
        }
    }

    private protected override void Completed(Request round) => _value = _valueOf(round);
}
