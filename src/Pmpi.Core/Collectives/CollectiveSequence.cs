using Pmpi.Matching;

namespace Pmpi.Collectives;

/// <summary>
/// The order of one communicator's collectives. MPI has every rank start a communicator's collectives, blocking and
/// nonblocking, in the same order, and PMPI runs them in that order in the communicator's one collective context, so
/// the tags that carry each collective's choices (<see cref="CollectiveTag"/>) still tell disagreeing ranks apart,
/// and a rank's Iallreduce meets another's Allreduce. A nonblocking collective (<see cref="Start{T}"/>) runs the
/// blocking algorithm on the communicator's own worker thread, in turn, so it progresses while the program computes;
/// a blocking one, on the caller's thread, first waits for the turn of those started before it
/// (<see cref="AwaitTurn"/>, called by every collective send and receive). Nothing waits while none is outstanding.
/// The node and leader communicators of a hierarchical algorithm share their parent's sequence.
/// </summary>
internal sealed class CollectiveSequence
{
    /// <summary>How long an idle worker waits for the next collective before its thread ends: longer than a loop's compute step, so a loop of nonblocking collectives keeps one thread.</summary>
    private static readonly TimeSpan Linger = TimeSpan.FromSeconds(1);

    [ThreadStatic] private static CollectiveSequence? t_running;

    private readonly Queue<Action> _queue = new();
    private bool _working;
    private int _outstanding;

    /// <summary>Starts <paramref name="collective"/> after those started before it; the request completes with its result.</summary>
    public CollectiveRequest<T> Start<T>(Func<T> collective)
    {
        var request = new CollectiveRequest<T>();
        lock (_queue)
        {
            _queue.Enqueue(() => request.Run(collective));
            _outstanding++;
            if (_working) Monitor.PulseAll(_queue);
            else
            {
                _working = true;
                // The thread flows the caller's execution context, so the worker runs as the same rank.
                new Thread(Work) { IsBackground = true, Name = "PMPI nonblocking collectives" }.Start();
            }
        }
        return request;
    }

    /// <summary>Returns once every collective started before is done, unless called by one of them.</summary>
    public void AwaitTurn()
    {
        if (Volatile.Read(ref _outstanding) == 0 || t_running == this) return;
        lock (_queue)
        {
            while (_outstanding > 0) Monitor.Wait(_queue);
        }
    }

    private void Work()
    {
        t_running = this;
        while (true)
        {
            Action next;
            lock (_queue)
            {
                while (_queue.Count == 0)
                {
                    if (Monitor.Wait(_queue, Linger) || _queue.Count > 0) continue;
                    _working = false;
                    return;
                }
                next = _queue.Dequeue();
            }
            next();
            lock (_queue)
            {
                if (--_outstanding == 0) Monitor.PulseAll(_queue);
            }
        }
    }
}
