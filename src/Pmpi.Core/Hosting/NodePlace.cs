namespace Pmpi.Hosting;

/// <summary>
/// Where a rank sits on its node: its place among its world's ranks there, how many there are, and which of its
/// world's nodes it is (<see cref="Rpc.RankEnvironment.LocalRank"/> and its siblings state the rules). Ranks that are
/// threads of one process share one node.
/// </summary>
internal readonly record struct NodePlace(int LocalRank, int LocalSize, int NodeRank)
{
    /// <summary>
    /// The place of <paramref name="rank"/> in a world whose ranks run on <paramref name="nodes"/> (indexed by world
    /// rank), for ranks that learn every rank's node themselves, as PMI-launched ranks do.
    /// </summary>
    public static NodePlace Among(IReadOnlyList<string> nodes, int rank)
    {
        ArgumentNullException.ThrowIfNull(nodes);
        ArgumentOutOfRangeException.ThrowIfNegative(rank);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(rank, nodes.Count);
        string node = nodes[rank];
        int local = 0, size = 0;
        var nodesBefore = new HashSet<string>(StringComparer.Ordinal); // nodes whose first rank precedes this node's
        for (int peer = 0; peer < nodes.Count; peer++)
        {
            if (nodes[peer] != node)
            {
                if (size == 0) nodesBefore.Add(nodes[peer]);
                continue;
            }
            if (peer < rank) local++;
            size++;
        }
        return new NodePlace(local, size, nodesBefore.Count);
    }
}
