using System.Diagnostics;
using System.Runtime;

namespace Pmpi.Bench;

/// <summary>
/// Brings a benchmark to steady-state code before it is timed: runs sweeps untimed until, on every rank, the JIT
/// took under 1% of their time. One sweep is not enough: tiered compilation promotes a method only once
/// 100 ms have passed without a new tier-0 compile, and with PGO it takes two steps, so after one sweep a collective's
/// hot paths still ran tier-0 code (4 ranks, Broadcast of 8 B: 12–164 µs per call after one sweep, 1.5–2.9 µs with
/// tiering off; Allreduce of 1 MB: 4.9 ms against 2.0 ms). A trickle of rarely called methods keeps tiering up long
/// after, which is why the test is the JIT's share of the time, not a sweep that compiles nothing. The C programs
/// need none of this.
/// </summary>
internal static class JitWarmup
{
    /// <summary>Windows at most: a benchmark that still compiles after this many is timed anyway.</summary>
    private const int MostWindows = 12;

    /// <summary>
    /// The shortest stretch of sweeps the JIT's share is judged over. Tiered compilation promotes only after 100 ms
    /// without a new tier-0 compile, so a shorter one may see no JIT only because promotion has not begun, as a sweep
    /// of one size does (`pingpong --sizes 1048576`: 10 ms).
    /// </summary>
    private static readonly TimeSpan Window = TimeSpan.FromMilliseconds(250);

    /// <summary>
    /// Runs <paramref name="sweep"/> until the JIT has settled; every rank must call this together, as
    /// <paramref name="mostOverRanks"/> (the largest of the ranks' values) makes every rank run the same number of
    /// sweeps. Returns that number.
    /// </summary>
    public static int Run(Action sweep, Func<long, long> mostOverRanks)
    {
        int sweeps = 0;
        for (int windows = 1; ; windows++)
        {
            var jitBefore = JitInfo.GetCompilationTime();
            long start = Stopwatch.GetTimestamp();
            do
            {
                sweep();
                sweeps++;
            }
            while (mostOverRanks(Stopwatch.GetElapsedTime(start) < Window ? 1 : 0) == 1);
            var jit = JitInfo.GetCompilationTime() - jitBefore;
            bool compiling = jit * 100 > Stopwatch.GetElapsedTime(start);
            if (mostOverRanks(compiling ? 1 : 0) == 0 || windows == MostWindows) return sweeps;
        }
    }
}
