namespace Pmpi.Collectives;

/// <summary>
/// The measured sizes at which the collectives change algorithm, one record per rank: the world communicator takes it
/// from how the rank was started (<see cref="EnvironmentOptions"/>), and every communicator made from it reads it once,
/// when it is made (<see cref="CollectiveSelection"/>). Every rank of a job must use the same values, or ranks choose
/// differently and fail naming both choices (CollectiveTag).
/// </summary>
internal sealed record CollectiveOptions
{
    /// <summary>The defaults, as measured.</summary>
    public static CollectiveOptions Default { get; } = new();

    /// <summary>
    /// From how many bytes an element-wise allreduce goes by blocks (<see cref="CollectiveAlgorithms.AllreduceByBlocks"/>)
    /// rather than whole arrays, with at least <see cref="CollectiveSelection.BlockAllreduceRanks"/> ranks. Defaults to
    /// 1,048,576 (1 MB); measured in docs/bench-log/2026-11-24-allreduce-by-blocks-threshold.md (in place, it won at
    /// 4 ranks at 1 MB, as it won at 8 ranks from 1 MB). Pmpi.Bench's <c>--block-allreduce-from</c> sets it.
    /// </summary>
    public int BlockAllreduceFrom { get; init; } = 1024 * 1024;

    /// <summary>
    /// From how many bytes a broadcast of an array of a raw type goes by blocks
    /// (<see cref="CollectiveAlgorithms.BroadcastInto"/>) when the communicator spans nodes, with at least
    /// <see cref="CollectiveSelection.BlockBroadcastRanks"/> ranks. Defaults to 65,536 (64 KB); measured in
    /// docs/bench-log/2026-11-26-broadcast-by-blocks-between-nodes.md. On one node the binomial tree always won.
    /// Pmpi.Bench's <c>--block-broadcast-from</c> sets it.
    /// </summary>
    public int BlockBroadcastFrom { get; init; } = 64 * 1024;
}
