using System.Diagnostics;

namespace Pmpi.Matching;

/// <summary>
/// A one-shot completion that a rank thread can wait on: it spins briefly (a peer on another core usually answers
/// within a microsecond), then blocks. Completers pay for a lock only when someone is blocked or subscribed.
/// </summary>
internal class Completion
{
    private const int Pending = 0, Completing = 1, Completed = 2;
    private const int CloseSpins = 64; // polls a pause apart, a few microseconds, before backing off

    private int _state;
    private int _blocked;
    private List<Action>? _callbacks;

    /// <summary>Whether the operation has completed (successfully, by cancel, or with an error).</summary>
    public bool IsCompleted => Volatile.Read(ref _state) == Completed;

    /// <summary>The error the operation completed with, if any.</summary>
    public Exception? Error { get; private set; }

    protected bool TryComplete(Exception? error = null)
    {
        if (Interlocked.CompareExchange(ref _state, Completing, Pending) != Pending) return false;
        Error = error;
        Volatile.Write(ref _state, Completed);
        // Full fence, paired with the one in Wait and OnCompleted: either this side sees their registration, or
        // they see the completed state. Only then is the lock needed, so the common hand-off takes no lock.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _blocked) == 0 && Volatile.Read(ref _callbacks) is null) return true;
        List<Action>? callbacks;
        lock (this)
        {
            Monitor.PulseAll(this);
            callbacks = _callbacks;
            _callbacks = null;
        }
        if (callbacks is not null) foreach (var callback in callbacks) callback();
        return true;
    }

    /// <summary>
    /// Waits until completed: spins first, polling <paramref name="engine"/>'s <see cref="MatchingEngine.Progress"/>
    /// each time round as its <see cref="MatchingEngine.Spin"/> says, then sleeps on those links a while
    /// (<see cref="IPolledLinks.SleepOn"/>), then blocks; and tells the spin how the wait went.
    /// </summary>
    public void Wait(MatchingEngine? engine = null)
    {
        if (IsCompleted) return;
        var progress = engine?.Progress;
        var (spinTicks, yields) = engine?.Spin.Next ?? SpinPolicy.Brief;
        long start = 0;
        var spinner = new SpinWait();
        for (int spins = 1; !IsCompleted; spins++)
        {
            // Reading the clock costs tens of nanoseconds, as much as a small message's whole wait: look only every
            // 64 spins, counting from the first look.
            if ((spins & 63) == 0)
            {
                long now = Stopwatch.GetTimestamp();
                if (start == 0) start = now;
                else if (now - start >= spinTicks) break;
            }
            if (progress is not null)
            {
                progress.Poll();
                if (IsCompleted) break;
                if (progress.Delivering) break;
            }
            // A small message's answer comes within microseconds: poll it closely; beyond that, back off, so a
            // spinning core does not slow the one that copies a large message.
            if (yields) Thread.Yield();
            else if (spins < CloseSpins) Thread.SpinWait(1);
            else spinner.SpinOnce(sleep1Threshold: -1);
        }
        if (IsCompleted)
        {
            engine?.Spin.EndedSpinning();
            return;
        }
        if (start == 0) start = Stopwatch.GetTimestamp();
        if (progress?.SleepOn(this) != true)
        {
            progress?.Sleeping();
            lock (this)
            {
                Volatile.Write(ref _blocked, 1);
                Interlocked.MemoryBarrier();
                while (!IsCompleted) Monitor.Wait(this);
            }
        }
        engine?.Spin.EndedBlocked(Stopwatch.GetTimestamp() - start);
    }

    /// <summary>Runs <paramref name="callback"/> once completed (at once if already completed).</summary>
    public void OnCompleted(Action callback)
    {
        lock (this)
        {
            if (!IsCompleted)
            {
                var callbacks = _callbacks ?? [];
                callbacks.Add(callback);
                Volatile.Write(ref _callbacks, callbacks);
                Interlocked.MemoryBarrier();
                if (!IsCompleted) return;
                // Completed meanwhile without seeing the registration (or about to take the lock and find it gone).
                callbacks.Remove(callback);
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
