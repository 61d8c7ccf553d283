using System.Collections.Immutable;
using Pmpi.Rpc.Routing;

namespace Pmpi.Collectives;

/// <summary>
/// What a communicator's collectives decide from the communicator alone, decided once when it is made, as Open MPI's
/// coll framework queries its components when a communicator is created and keeps the chosen module: whether they
/// climb the communicator's nodes and domains (<see cref="Topology"/>), and from how many bytes an array goes by
/// blocks given its size, its nodes and the rank's <see cref="CollectiveOptions"/>. A call then compares its
/// message's size with these fields; nothing here changes after.
/// </summary>
/// <remarks>
/// Fields tested per call rather than a table of functions: the collectives are generic methods, and a generic
/// virtual call is resolved through the runtime's lookup cache, which costs more than a field's test.
/// </remarks>
internal sealed class CollectiveSelection
{
    /// <summary>The fewest ranks for which a broadcast goes by blocks (with two, there is nothing to share out).</summary>
    public const int BlockBroadcastRanks = 3;

    /// <summary>The fewest ranks for which an allreduce goes by blocks (below that the extra rounds cost more than the bytes they save).</summary>
    public const int BlockAllreduceRanks = 4;

    /// <summary>A size no array reaches: the algorithm by blocks never applies.</summary>
    private const long Never = long.MaxValue;

    private CollectiveSelection(CommunicatorTopology? topology, bool spansNodes, long allreduceByBlocksFrom, long broadcastByBlocksFrom)
    {
        Topology = topology;
        SpansNodes = spansNodes;
        AllreduceByBlocksFrom = allreduceByBlocksFrom;
        BroadcastByBlocksFrom = broadcastByBlocksFrom;
    }

    /// <summary>How the communicator's members sit on nodes and domains, its collectives' levels; null when one level is all there is.</summary>
    public CommunicatorTopology? Topology { get; }

    /// <summary>Whether the communicator's members run on more than one node (as far as the rank table says).</summary>
    public bool SpansNodes { get; }

    /// <summary>
    /// From how many bytes an element-wise allreduce of an array of a raw type, with at least one element per rank,
    /// goes by blocks: <see cref="CollectiveOptions.BlockAllreduceFrom"/> from <see cref="BlockAllreduceRanks"/> ranks, else never.
    /// </summary>
    public long AllreduceByBlocksFrom { get; }

    /// <summary>
    /// From how many bytes a broadcast of an array of a raw type, with at least one element per rank, goes by blocks:
    /// <see cref="CollectiveOptions.BlockBroadcastFrom"/> from <see cref="BlockBroadcastRanks"/> ranks on more than one node, else never.
    /// </summary>
    public long BroadcastByBlocksFrom { get; }

    /// <summary>
    /// The selection for <paramref name="comm"/>, whose members run where <paramref name="places"/> (indexed by job
    /// rank) says. Every member computes it alike from the same table and options, without a message.
    /// </summary>
    public static CollectiveSelection For(Intracommunicator comm, ImmutableArray<RankPlace> places, CollectiveOptions options)
    {
        int size = comm.Size;
        // One rank has no levels and nothing to share out; Self and the node levels of a topology are most often that.
        if (size == 1) return new CollectiveSelection(null, false, Never, Never);
        bool spansNodes = CommunicatorTopology.SpansNodes(comm, places);
        // On one node there are no levels to climb, so the table need not be grouped.
        return new CollectiveSelection(
            spansNodes ? CommunicatorTopology.Of(comm, places) : null,
            spansNodes,
            size >= BlockAllreduceRanks ? options.BlockAllreduceFrom : Never,
            size >= BlockBroadcastRanks && spansNodes ? options.BlockBroadcastFrom : Never);
    }
}
