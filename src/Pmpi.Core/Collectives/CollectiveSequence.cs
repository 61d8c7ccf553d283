namespace Pmpi.Collectives;

/// <summary>
/// The order of one communicator's collectives. MPI has every rank start a communicator's collectives, blocking and
/// nonblocking, in the same order, and PMPI runs them in that order in the communicator's one collective context, so
/// the tags that carry each collective's choices (<see cref="Matching.CollectiveTag"/>) still tell disagreeing ranks
/// apart, and a rank's Iallreduce meets another's Allreduce. A nonblocking collective (<see cref="Start{T}"/>) runs
/// the blocking algorithm on the communicator's own worker thread, in turn, so it progresses while the program
/// computes; one still queued when the program waits for it runs on the waiting thread instead
/// (<see cref="TryRunHere"/>), sparing two thread hand-offs. A blocking collective, on the caller's thread, first
/// waits for those started before it (<see cref="AwaitTurn"/>, called by every collective send and receive); nothing
/// waits while none is outstanding. The node and leader communicators of a hierarchical algorithm share their
/// parent's sequence.
/// </summary>
internal sealed class CollectiveSequence
{
    /// <summary>How long an idle worker waits for the next collective before its thread ends: longer than a loop's compute step, so a loop of nonblocking collectives keeps one thread.</summary>
    private static readonly TimeSpan Linger = TimeSpan.FromSeconds(1);

    [ThreadStatic] private static CollectiveSequence? t_running;

    private readonly Queue<ISequencedCollective> _queue = new();
    private bool _working;   // a worker thread exists
    private bool _idle;      // the worker waits for a collective to run
    private bool _executing; // a collective of this sequence runs, on the worker or a waiting thread
    private int _outstanding;
    private int _awaitingTurn; // threads in AwaitTurn

    /// <summary>Starts <paramref name="collective"/> after those started before it; the request completes with its result.</summary>
    public CollectiveRequest<T> Start<T>(Func<T> collective)
    {
        var request = new CollectiveRequest<T>(this, collective);
        lock (_queue)
        {
            _queue.Enqueue(request);
            _outstanding++;
            if (_idle) Monitor.PulseAll(_queue);
            else if (!_working)
            {
                _working = true;
                // The thread flows the caller's execution context, so the worker runs as the same rank.
                new Thread(Work) { IsBackground = true, Name = "PMPI nonblocking collectives" }.Start();
            }
        }
        return request;
    }

    /// <summary>Runs <paramref name="collective"/> on the calling thread if it is next and nothing of this sequence runs; false otherwise.</summary>
    public bool TryRunHere(ISequencedCollective collective)
    {
        lock (_queue)
        {
            if (_executing || _queue.Count == 0 || _queue.Peek() != collective) return false;
            _queue.Dequeue();
            _executing = true;
        }
        Execute(collective);
        return true;
    }

    /// <summary>Returns once every collective started before is done, unless called by one of them.</summary>
    public void AwaitTurn()
    {
        if (Volatile.Read(ref _outstanding) == 0 || t_running == this) return;
        lock (_queue)
        {
            _awaitingTurn++;
            while (_outstanding > 0) Monitor.Wait(_queue);
            _awaitingTurn--;
        }
    }

    private void Work()
    {
        while (true)
        {
            ISequencedCollective next;
            lock (_queue)
            {
                while (_queue.Count == 0 || _executing)
                {
                    _idle = true;
                    bool woken = Monitor.Wait(_queue, Linger);
                    _idle = false;
                    if (woken || _queue.Count > 0) continue;
                    _working = false;
                    return;
                }
                next = _queue.Dequeue();
                _executing = true;
            }
            Execute(next);
        }
    }

    private void Execute(ISequencedCollective collective)
    {
        var outer = t_running;
        t_running = this;
        try
        {
            collective.Run();
        }
        finally
        {
            t_running = outer;
            lock (_queue)
            {
                _executing = false;
                _outstanding--;
                // Wake only whom it concerns: the idle worker when another is queued, blocking collectives when none is left.
                if ((_idle && _queue.Count > 0) || (_awaitingTurn > 0 && _outstanding == 0)) Monitor.PulseAll(_queue);
            }
        }
    }
}

/// <summary>A collective that waits in a <see cref="CollectiveSequence"/>; <see cref="Run"/> never throws (the request keeps the error).</summary>
internal interface ISequencedCollective
{
    void Run();
}
