using System.Diagnostics;

namespace Pmpi.Collectives;

/// <summary>
/// The order of one communicator's collectives. MPI has every rank start a communicator's collectives, blocking and
/// nonblocking, in the same order, and PMPI runs them in that order in the communicator's one collective context, so
/// the tags that carry each collective's choices (<see cref="Matching.CollectiveTag"/>) still tell disagreeing ranks
/// apart, and a rank's Iallreduce meets another's Allreduce.
/// <para>
/// A nonblocking collective (<see cref="Start{T}"/>) runs the blocking algorithm, in turn, on the first thread that
/// needs it: the program's, when it waits for the collective (<see cref="TryRunHere"/>) or starts a blocking one after
/// it (<see cref="AwaitTurn"/>), or else the communicator's own worker thread, which takes a collective nobody has
/// waited for within its grace (<see cref="DefaultGrace"/>) of its turn, or at once when the program tests or awaits it
/// (<see cref="Expedite"/>), so it progresses while the program computes. A rank's threads share its processor: a
/// collective handed to the worker and back costs two thread switches, more than a small one takes, and a program that
/// waits at once never pays them. The node and leader communicators of a hierarchical algorithm share their parent's
/// sequence.
/// </para>
/// </summary>
internal sealed class CollectiveSequence
{
    /// <summary>
    /// How long a collective's turn waits for the program, by default, before the worker takes it: a wait that comes
    /// sooner runs it on the program's own thread (docs/bench-log/2026-12-01-nonblocking-collectives-on-the-waiting-thread.md).
    /// </summary>
    internal static readonly TimeSpan DefaultGrace = TimeSpan.FromMilliseconds(1);

    /// <summary>How long an idle worker stays for the next collective before its thread ends: longer than a loop's compute step, so a loop of nonblocking collectives keeps one thread.</summary>
    private static readonly TimeSpan Linger = TimeSpan.FromSeconds(1);

    private static readonly long LingerTicks = (long)(Linger.TotalSeconds * Stopwatch.Frequency);

    [ThreadStatic] private static CollectiveSequence? t_running;

    private readonly TimeSpan _grace;
    private readonly long _graceTicks;
    private readonly Queue<ISequencedCollective> _queue = new();
    private readonly HashSet<ISequencedCollective> _expedited = new(ReferenceEqualityComparer.Instance); // queued ones the program tests or awaits
    private bool _working;      // a worker thread exists
    private bool _executing;    // a collective of this sequence runs, on the worker or a program's thread
    private long _turnSince;    // when the queue's first collective got its turn (nothing before it left to run)
    private long _lastActivity; // when a collective last started or ended: the worker lingers from then
    private int _outstanding;
    private int _waiting;       // program threads waiting for the running collective to end

    /// <summary>A sequence whose worker takes a collective <paramref name="grace"/> after its turn (<see cref="DefaultGrace"/> unless given).</summary>
    internal CollectiveSequence(TimeSpan? grace = null)
    {
        _grace = grace ?? DefaultGrace;
        _graceTicks = (long)(_grace.TotalSeconds * Stopwatch.Frequency);
    }

    /// <summary>Starts <paramref name="collective"/> after those started before it; the request completes with its result.</summary>
    public CollectiveRequest<T> Start<T>(Func<T> collective)
    {
        var request = new CollectiveRequest<T>(this, collective);
        lock (_queue)
        {
            long now = Stopwatch.GetTimestamp();
            if (_queue.Count == 0) _turnSince = now;
            _queue.Enqueue(request);
            _outstanding++;
            _lastActivity = now;
            if (!_working)
            {
                _working = true;
                // The thread flows the caller's execution context, so the worker runs as the same rank.
                new Thread(Work) { IsBackground = true, Name = "PMPI nonblocking collectives" }.Start();
            }
        }
        return request;
    }

    /// <summary>
    /// Runs the collectives queued up to <paramref name="collective"/>, in order, on the calling thread, waiting while
    /// another thread runs one; false when <paramref name="collective"/> is no longer queued (another thread has it).
    /// </summary>
    public bool TryRunHere(ISequencedCollective collective)
    {
        while (true)
        {
            ISequencedCollective next;
            lock (_queue)
            {
                while (_executing && _queue.Contains(collective)) WaitForTheRunningOne();
                if (!_queue.Contains(collective)) return false;
                next = TakeFirst();
            }
            Execute(next);
            if (ReferenceEquals(next, collective)) return true;
        }
    }

    /// <summary>
    /// Has the worker run the queue up to <paramref name="collective"/> without the grace: the program tests or awaits
    /// it rather than waiting for it on its own thread.
    /// </summary>
    public void Expedite(ISequencedCollective collective)
    {
        lock (_queue)
        {
            if (_queue.Contains(collective) && _expedited.Add(collective)) Monitor.PulseAll(_queue);
        }
    }

    /// <summary>Returns once every collective started before is done, running the queued ones here; unless called by one of them.</summary>
    public void AwaitTurn()
    {
        if (Volatile.Read(ref _outstanding) == 0 || t_running == this) return;
        while (true)
        {
            ISequencedCollective next;
            lock (_queue)
            {
                while (_executing) WaitForTheRunningOne();
                if (_queue.Count == 0) return;
                next = TakeFirst();
            }
            Execute(next);
        }
    }

    private void WaitForTheRunningOne()
    {
        _waiting++;
        Monitor.Wait(_queue);
        _waiting--;
    }

    private ISequencedCollective TakeFirst()
    {
        _executing = true;
        var first = _queue.Dequeue();
        _expedited.Remove(first);
        return first;
    }

    private void Work()
    {
        while (true)
        {
            ISequencedCollective next;
            lock (_queue)
            {
                while (true)
                {
                    long now = Stopwatch.GetTimestamp();
                    if (!_executing && _queue.Count > 0 && (_expedited.Count > 0 || now - _turnSince >= _graceTicks)) break;
                    if (!_executing && _queue.Count == 0 && now - _lastActivity >= LingerTicks)
                    {
                        _working = false;
                        return;
                    }
                    // Start does not wake the worker (a thread switch on the rank's processor for every collective);
                    // it looks again within the grace, and at once when expedited or a running collective ends.
                    Monitor.Wait(_queue, _grace);
                }
                next = TakeFirst();
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
                _turnSince = _lastActivity = Stopwatch.GetTimestamp();
                if (_waiting > 0 || _expedited.Count > 0) Monitor.PulseAll(_queue);
            }
        }
    }
}

/// <summary>A collective that waits in a <see cref="CollectiveSequence"/>; <see cref="Run"/> never throws (the request keeps the error).</summary>
internal interface ISequencedCollective
{
    void Run();
}
