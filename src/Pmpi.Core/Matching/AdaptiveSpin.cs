namespace Pmpi.Matching;

/// <summary>
/// How long a rank's next wait spins, adapted to how its recent waits went, as HotSpot adapts its spinning on a monitor
/// to whether spinning there succeeded lately. A wait spins as its <see cref="Policy"/> says while waits end within
/// that spin. Once <see cref="WastedBeforeBrief"/> waits in a row outlasted it, each having spun for nothing and then
/// blocked (a message through gateways, a large message, a peer computing), waits spin only briefly
/// (<see cref="SpinPolicy.Brief"/>) and leave the core to whatever they wait for: on a machine that runs the
/// gateways or the copying peer beside the ranks, a 1 MB ping-pong through a gateway pair took 1,245–1,412 µs instead
/// of 1,267–1,595 (docs/bench-log/2026-11-30-adaptive-spin.md). The first wait that ends within the policy's spin
/// again restores it.
/// Waits of several threads update it without a lock: it is a hint.
/// </summary>
internal sealed class AdaptiveSpin
{
    /// <summary>How many waits in a row must outlast the policy's spin before waits spin briefly.</summary>
    public const int WastedBeforeBrief = 4;

    private int _wasted;

    /// <summary>
    /// How a waiting thread polls before it blocks when spinning pays: <see cref="SpinPolicy.Brief"/> unless the device
    /// knows how many of the job's ranks share the node (<see cref="SpinPolicy.For"/>).
    /// </summary>
    public SpinPolicy Policy { get; set; } = SpinPolicy.Brief;

    /// <summary>How the next wait polls: the policy, or no longer than briefly after waits that outlasted it.</summary>
    public SpinPolicy Next => _wasted < WastedBeforeBrief ? Policy : Policy with { Ticks = Math.Min(Policy.Ticks, SpinPolicy.Brief.Ticks) };

    /// <summary>A wait ended while it spun: spinning paid.</summary>
    public void EndedSpinning()
    {
        if (_wasted != 0) _wasted = 0;
    }

    /// <summary>A wait that stopped spinning ended, <paramref name="waitedTicks"/> (Stopwatch ticks) after it began.</summary>
    public void EndedBlocked(long waitedTicks) =>
        _wasted = waitedTicks > Policy.Ticks ? Math.Min(_wasted + 1, WastedBeforeBrief) : 0;
}
