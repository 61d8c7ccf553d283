using System.Diagnostics;

namespace Pmpi.Matching;

/// <summary>
/// A one-shot completion that a rank thread can wait on: it spins briefly (a peer on another core usually answers
/// within a microsecond), then blocks. Completers pay for a lock only when someone is blocked or subscribed.
/// </summary>
internal class Completion
{
    // Spinning beyond this is wasted when ranks outnumber cores; blocking costs a wake-up of a few microseconds.
    private static readonly long SpinTicks = Stopwatch.Frequency / 20_000; // 50 µs

    private int _state; // 0 pending, 1 completed
    private int _blocked;
    private List<Action>? _callbacks;

    /// <summary>Whether the operation has completed (successfully, by cancel, or with an error).</summary>
    public bool IsCompleted => Volatile.Read(ref _state) != 0;

    /// <summary>The error the operation completed with, if any.</summary>
    public Exception? Error { get; private set; }

    protected bool TryComplete(Exception? error = null)
    {
        if (Volatile.Read(ref _state) != 0) return false;
        lock (this)
        {
            // The lock orders completion against Wait/OnCompleted registering under the same lock, so a late
            // registrant always sees the state and an early one is always woken.
            if (_state != 0) return false;
            Error = error;
            Volatile.Write(ref _state, 1);
            if (_blocked != 0) Monitor.PulseAll(this);
        }
        var callbacks = Interlocked.Exchange(ref _callbacks, null);
        if (callbacks is not null) foreach (var callback in callbacks) callback();
        return true;
    }

    /// <summary>Waits until completed: spins first, then blocks.</summary>
    public void Wait()
    {
        if (IsCompleted) return;
        long start = Stopwatch.GetTimestamp();
        var spinner = new SpinWait();
        while (!IsCompleted && Stopwatch.GetTimestamp() - start < SpinTicks) spinner.SpinOnce(sleep1Threshold: -1);
        if (IsCompleted) return;
        lock (this)
        {
            _blocked = 1;
            while (_state == 0) Monitor.Wait(this);
        }
    }

    /// <summary>Runs <paramref name="callback"/> once completed (at once if already completed).</summary>
    public void OnCompleted(Action callback)
    {
        lock (this)
        {
            if (_state == 0)
            {
                (_callbacks ??= []).Add(callback);
                return;
            }
        }
        callback();
    }

    /// <summary>A task that completes with this operation (for the async API forms).</summary>
    public Task AsTask()
    {
        if (IsCompleted) return Task.CompletedTask;
        var source = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        OnCompleted(() => source.TrySetResult());
        return source.Task;
    }
}
