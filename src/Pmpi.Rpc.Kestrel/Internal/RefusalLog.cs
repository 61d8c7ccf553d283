using System.Diagnostics.Metrics;
using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>
/// Decides which refusals of a daemon reach its log, so that a caller who is refused over and over (one
/// unauthenticated client made 116-320 KiB/s of log) costs a line or two per interval: the first refusal of each
/// peer address and kind in an interval (10 s) is logged in full by whoever refused it; the rest are counted, and
/// when the interval ends one line says how many ("Refused 212 more /pmpi.v1.Agent/Launch calls (Unauthenticated)
/// from 10.0.0.5 in the last 10 s"). A kind never holds what a caller chose (a path, a job id): each new one would
/// be a line. Calls refused by the services, connections refused by the limits and TLS handshakes refused by the
/// listener go through the one instance a host registers (<see cref="TryAddTo"/>). Memory is bounded: at most
/// <c>maxWindows</c> peer-and-kind windows are open; a new one beyond them closes (and reports) the oldest. Every
/// refusal, logged or not, also counts on the meter <see cref="KestrelGrpcExtensions.RefusalsMeterName"/>
/// (<c>pmpi.daemon.refusals</c>, by <c>pmpi.refusal.kind</c>), which dotnet-counters shows and the daemons export.
/// </summary>
internal sealed class RefusalLog : IDisposable
{
    /// <summary>The log category of Pmpi.Rpc's server events (<see cref="ServerLog"/>).</summary>
    public const string Category = "Pmpi.Rpc.Kestrel";

    /// <summary>Peer-and-kind windows open at once, by default; one per attacking address is plenty.</summary>
    public const int DefaultMaxWindows = 1024;

    /// <summary>How long one window lasts, by default.</summary>
    public static readonly TimeSpan DefaultInterval = TimeSpan.FromSeconds(10);

    private readonly TimeProvider _time;
    private readonly TimeSpan _interval;
    private readonly int _maxWindows;
    private readonly ITimer _timer;
    private readonly Dictionary<(IPAddress Peer, string Kind), LinkedListNode<Window>> _windows = [];
    private readonly LinkedList<Window> _byStart = []; // oldest first: windows open in time order and never move
    private readonly Lock _lock = new();
    private readonly Counter<long>? _refusals;

    /// <param name="loggers">Where the summaries and Pmpi.Rpc's own refusals go (category <see cref="Category"/>).</param>
    /// <param name="time">The clock; the system's when null.</param>
    /// <param name="interval">How long one window lasts; <see cref="DefaultInterval"/> when null.</param>
    /// <param name="maxWindows">Windows open at once.</param>
    /// <param name="meter">Where refusals are counted; nowhere when null.</param>
    public RefusalLog(ILoggerFactory loggers, TimeProvider? time = null, TimeSpan? interval = null, int maxWindows = DefaultMaxWindows, Meter? meter = null)
    {
        ArgumentNullException.ThrowIfNull(loggers);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxWindows);
        Logger = loggers.CreateLogger(Category);
        _time = time ?? TimeProvider.System;
        _interval = interval ?? DefaultInterval;
        _maxWindows = maxWindows;
        _refusals = meter?.CreateCounter<long>("pmpi.daemon.refusals", "{refusal}",
            "Calls, connections and TLS handshakes the daemon refused, by pmpi.refusal.kind (e.g. \"calls (Unauthenticated)\", \"TLS handshakes\")");
        // Armed only while a window is open, so an idle daemon runs no timer.
        _timer = _time.CreateTimer(_ => CloseEndedWindows(), null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The logger of Pmpi.Rpc's own refusals and of the summaries.</summary>
    public ILogger Logger { get; }

    /// <summary>Registers the host's one instance, unless there is one already.</summary>
    public static void TryAddTo(IServiceCollection services) =>
        services.TryAddSingleton(provider => new RefusalLog(provider.GetRequiredService<ILoggerFactory>(),
            meter: provider.GetRequiredService<IMeterFactory>().Create(KestrelGrpcExtensions.RefusalsMeterName)));

    /// <summary>
    /// Counts a refusal of <paramref name="kind"/> (a plural noun phrase: "calls (Unauthenticated)", "TLS
    /// handshakes") from <paramref name="peer"/>. True for the first of its window, which the caller then logs in
    /// full; false for the rest, which are summed up when the window ends.
    /// </summary>
    public bool ShouldLog(IPAddress? peer, string kind)
    {
        ArgumentNullException.ThrowIfNull(kind);
        _refusals?.Add(1, new KeyValuePair<string, object?>("pmpi.refusal.kind", kind));
        peer = peer is null ? IPAddress.None : peer.IsIPv4MappedToIPv6 ? peer.MapToIPv4() : peer;
        List<Window>? ended = null;
        lock (_lock)
        {
            long now = _time.GetTimestamp();
            if (_windows.TryGetValue((peer, kind), out var open))
            {
                if (_time.GetElapsedTime(open.Value.Start, now) < _interval)
                {
                    open.Value.More++;
                    return false;
                }
                Close(open, ref ended); // the timer has not come round yet
            }
            if (_windows.Count >= _maxWindows) Close(_byStart.First!, ref ended);
            _windows[(peer, kind)] = _byStart.AddLast(new Window(peer, kind, now));
            if (_byStart.Count == 1) _timer.Change(_interval, Timeout.InfiniteTimeSpan);
        }
        Summarize(ended);
        return true;
    }

    /// <summary>Closes and reports every window whose interval has passed, and waits for the next one to end.</summary>
    internal void CloseEndedWindows()
    {
        List<Window>? ended = null;
        lock (_lock)
        {
            long now = _time.GetTimestamp();
            while (_byStart.First is { } oldest && _time.GetElapsedTime(oldest.Value.Start, now) >= _interval) Close(oldest, ref ended);
            if (_byStart.First is { } next) _timer.Change(_interval - _time.GetElapsedTime(next.Value.Start, now), Timeout.InfiniteTimeSpan);
        }
        Summarize(ended);
    }

    private void Close(LinkedListNode<Window> window, ref List<Window>? ended)
    {
        _byStart.Remove(window);
        _windows.Remove((window.Value.Peer, window.Value.Kind));
        if (window.Value.More > 0) (ended ??= []).Add(window.Value);
    }

    /// <summary>One line per closed window that counted refusals beyond its first, written outside the lock.</summary>
    private void Summarize(List<Window>? ended)
    {
        if (ended is null) return;
        foreach (var window in ended) ServerLog.RefusalsSummarized(Logger, window.More, window.Kind, window.Peer, _interval.TotalSeconds);
    }

    /// <summary>Reports what the open windows counted, and stops the timer.</summary>
    public void Dispose()
    {
        List<Window>? ended = null;
        lock (_lock)
        {
            while (_byStart.First is { } oldest) Close(oldest, ref ended);
        }
        _timer.Dispose();
        Summarize(ended);
    }

    private sealed class Window(IPAddress peer, string kind, long start)
    {
        public IPAddress Peer { get; } = peer;

        public string Kind { get; } = kind;

        public long Start { get; } = start;

        /// <summary>Refusals after the first, not logged one by one.</summary>
        public int More { get; set; }
    }
}
