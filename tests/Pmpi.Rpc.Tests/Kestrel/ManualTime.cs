namespace Pmpi.Rpc.Tests.Kestrel;

/// <summary>A clock that moves only when told, and fires the timers made from it as it passes their time.</summary>
internal sealed class ManualTime : TimeProvider
{
    private readonly List<Timer> _timers = [];
    private long _now;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => _now;

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new Timer(this, callback, state);
        timer.Change(dueTime, period);
        _timers.Add(timer);
        return timer;
    }

    /// <summary>Moves the clock on by <paramref name="time"/> and fires each timer whose time came.</summary>
    public void Advance(TimeSpan time)
    {
        _now += time.Ticks;
        foreach (var timer in _timers.ToArray()) timer.FireIfDue();
    }

    private sealed class Timer(ManualTime time, TimerCallback callback, object? state) : ITimer
    {
        private long _due = -1;
        private TimeSpan _period = Timeout.InfiniteTimeSpan;

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            _due = dueTime == Timeout.InfiniteTimeSpan ? -1 : time._now + dueTime.Ticks;
            _period = period;
            return true;
        }

        public void FireIfDue()
        {
            if (_due < 0 || _due > time._now) return;
            _due = _period == Timeout.InfiniteTimeSpan ? -1 : _due + _period.Ticks;
            callback(state);
        }

        public void Dispose() => _due = -1;

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
