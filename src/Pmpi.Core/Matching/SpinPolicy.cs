using System.Diagnostics;

namespace Pmpi.Matching;

/// <summary>
/// How a thread waiting for its rank polls before it blocks: for how long (Stopwatch ticks), and whether it gives
/// its core away between polls. Blocking costs a wake-up per message, and on a node whose ranks outnumber its cores
/// a wake-up waits for a core; spinning costs the core. So, as Open MPI polls and yields when oversubscribed:
/// <list type="bullet">
/// <item>a rank with a core to itself spins busily for a millisecond (a peer that serializes or computes between
/// messages answers within that);</item>
/// <item>a rank sharing its core polls and yields (sched_yield: the core goes to a rank that has work, and comes
/// back when none has) for half a millisecond, long enough to span a collective's rounds, so its peers' messages
/// find it runnable instead of asleep; longer (measured up to 5 ms) gained nothing for small messages and slowed
/// large ones, whose copying rank the yielding ranks keep interrupting;</item>
/// <item>where the device does not know the node, it spins briefly (<see cref="Brief"/>).</item>
/// </list>
/// Either way a rank waiting longer sleeps and uses no CPU, and a spin that keeps not paying is cut short
/// (<see cref="AdaptiveSpin"/>).
/// </summary>
internal readonly record struct SpinPolicy(long Ticks, bool Yields)
{
    /// <summary>A brief busy spin: a peer on another core usually answers within microseconds.</summary>
    public static SpinPolicy Brief { get; } = new(Stopwatch.Frequency / 20_000, Yields: false); // 50 µs

    /// <summary>The policy for a rank whose node runs <paramref name="ranksOnNode"/> ranks of its job.</summary>
    public static SpinPolicy For(int ranksOnNode) => ranksOnNode <= System.Environment.ProcessorCount
        ? new SpinPolicy(Stopwatch.Frequency / 1_000, Yields: false) // 1 ms
        : new SpinPolicy(Stopwatch.Frequency / 2_000, Yields: true); // 500 µs
}
