using System.Runtime.ExceptionServices;
using Pmpi.Collectives;
using Pmpi.Matching;

namespace Pmpi;

/// <summary>
/// A nonblocking collective in progress (MPI_Ibarrier, MPI_Iallreduce, ...): it runs on the thread that waits for it,
/// or on its own while the program computes, tests or awaits it (<see cref="CollectiveSequence"/>); <see cref="Value"/>
/// is its result, as the blocking collective would return it.
/// </summary>
public sealed class CollectiveRequest<T> : Request, ISequencedCollective
{
    private readonly Outcome _outcome = new();
    private readonly CollectiveSequence _sequence;
    private readonly Func<T> _collective;
    private T _value = default!;
    private bool _expedited;

    internal CollectiveRequest(CollectiveSequence sequence, Func<T> collective)
    {
        _sequence = sequence;
        _collective = collective;
    }

    /// <summary>The collective's result; waits for completion first.</summary>
    public T Value
    {
        get
        {
            Wait();
            return _value;
        }
    }

    internal override Completion Completion => _outcome;

    /// <inheritdoc/>
    public override CompletedStatus Wait()
    {
        if (!_outcome.IsCompleted) _sequence.TryRunHere(this);
        _outcome.Wait();
        return Status();
    }

    /// <inheritdoc/>
    public override CompletedStatus? Test()
    {
        if (_outcome.IsCompleted) return Status();
        Expedite();
        return _outcome.IsCompleted ? Status() : null;
    }

    internal override void Expedite()
    {
        if (_outcome.IsCompleted) return;
        if (!_expedited)
        {
            _expedited = true;
            _sequence.Expedite(this);
        }
        // The worker shares the rank's processor: a program testing in a loop would hold it from the collective.
        Thread.Yield();
    }

    /// <summary>Throws: MPI does not allow a collective to be cancelled.</summary>
    public override void Cancel() =>
        throw new MpiException(ErrorClass.InvalidRequest, "A nonblocking collective cannot be cancelled (MPI_Cancel of it is erroneous); wait for it or test it.");

    void ISequencedCollective.Run()
    {
        try
        {
            _value = _collective();
            _outcome.Finish(null);
        }
        catch (Exception e)
        {
            _outcome.Finish(e);
        }
    }

    private CompletedStatus Status()
    {
        // An error of the collective (a user operation's own exception included) is thrown as it was raised.
        if (_outcome.Error is { } error) ExceptionDispatchInfo.Throw(error);
        return CompletedStatus.Empty;
    }

    private sealed class Outcome : Completion
    {
        public void Finish(Exception? error) => TryComplete(error);
    }
}
