using System.Collections.Immutable;

namespace Pmpi.Agent.Computation;

/// <summary>Where one world rank runs.</summary>
/// <param name="WorldRank">The rank in MPI_COMM_WORLD.</param>
/// <param name="Group">The ranks element the rank comes from: its program, arguments and environment.</param>
/// <param name="Node">The node whose agent launches the rank; null for a local computation (the embedded agent).</param>
public sealed record RankAssignment(int WorldRank, RanksDefinition Group, NodeDefinition? Node);

/// <summary>Assigns world ranks to nodes.</summary>
public static class Placement
{
    /// <summary>
    /// Assigns every world rank of <paramref name="computation"/> to a node. The result depends only on the
    /// computation, so the master, the CLI's dry run and tests agree on it.
    /// </summary>
    /// <remarks>
    /// <list type="number">
    /// <item>World ranks are numbered in document order of the ranks elements, then within each group.</item>
    /// <item>Pinned groups (<c>node="..."</c>) go to their node, and their ranks reserve that node's slots first, so
    /// an earlier unpinned group cannot take slots a later pinned group needs.</item>
    /// <item>Unpinned ranks fill the free slots node by node in document order (Open MPI's <c>--map-by slot</c>):
    /// nodes a(2) and b(2) with four ranks give a, a, b, b. With <see cref="RankMapping.Node"/> they go one per node
    /// in turn instead, skipping nodes whose slots are taken (<c>--map-by node</c>): a, b, a, b.</item>
    /// <item>When every slot is taken (only possible with <c>oversubscribe="true"</c>), each further rank goes to the
    /// node with the fewest ranks per slot, the earliest node on a tie, so oversubscription spreads in proportion to
    /// slots.</item>
    /// <item>A local computation (no nodes) puts every rank on the embedded agent: <see cref="RankAssignment.Node"/>
    /// is null.</item>
    /// </list>
    /// </remarks>
    /// <param name="computation">A computation from <see cref="ComputationFile"/>.</param>
    /// <returns>One assignment per world rank, indexed by world rank.</returns>
    /// <exception cref="ArgumentException">A group is pinned to a node the computation does not declare.</exception>
    public static ImmutableArray<RankAssignment> Assign(ComputationDefinition computation)
    {
        ArgumentNullException.ThrowIfNull(computation);
        var result = ImmutableArray.CreateBuilder<RankAssignment>(computation.WorldSize);
        var nodes = computation.Nodes;

        if (computation.IsLocal)
        {
            foreach (var group in computation.Ranks)
                for (int i = 0; i < group.Count; i++) result.Add(new(result.Count, group, null));
            return result.MoveToImmutable();
        }

        var index = new Dictionary<string, int>(StringComparer.Ordinal);
        for (int i = 0; i < nodes.Length; i++) index.TryAdd(nodes[i].Name, i);

        var used = new int[nodes.Length];
        foreach (var group in computation.Ranks)
        {
            if (group.Node is null) continue;
            if (!index.TryGetValue(group.Node, out int pinned))
            {
                throw new ArgumentException($"Ranks at {group.Location} are pinned to node '{group.Node}', which the computation does not declare.", nameof(computation));
            }
            used[pinned] += group.Count;
        }

        int fill = 0; // by slot: the node being filled; by node: the next node's turn
        foreach (var group in computation.Ranks)
        {
            for (int i = 0; i < group.Count; i++)
            {
                int node;
                if (group.Node is not null)
                {
                    node = index[group.Node];
                }
                else
                {
                    node = computation.Mapping == RankMapping.Node ? NextInTurn(nodes, used, ref fill) : NextToFill(nodes, used, ref fill);
                    used[node]++;
                }
                result.Add(new(result.Count, group, nodes[node]));
            }
        }
        return result.MoveToImmutable();
    }

    /// <summary>The node being filled, or the next one once its slots are taken; the least loaded once all are.</summary>
    private static int NextToFill(ImmutableArray<NodeDefinition> nodes, int[] used, ref int fill)
    {
        while (fill < nodes.Length && used[fill] >= nodes[fill].Slots) fill++;
        return fill < nodes.Length ? fill : LeastLoaded(nodes, used);
    }

    /// <summary>The first node from <paramref name="turn"/> on (wrapping) with a free slot, the turn passing to the one after it; the least loaded once all are full.</summary>
    private static int NextInTurn(ImmutableArray<NodeDefinition> nodes, int[] used, ref int turn)
    {
        for (int step = 0; step < nodes.Length; step++)
        {
            int node = (turn + step) % nodes.Length;
            if (used[node] >= nodes[node].Slots) continue;
            turn = (node + 1) % nodes.Length;
            return node;
        }
        return LeastLoaded(nodes, used);
    }

    private static int LeastLoaded(ImmutableArray<NodeDefinition> nodes, int[] used)
    {
        int best = 0;
        for (int i = 1; i < nodes.Length; i++)
        {
            // used[i]/slots[i] < used[best]/slots[best], cross-multiplied to stay in integers; strict, so ties keep the earlier node.
            if ((long)used[i] * nodes[best].Slots < (long)used[best] * nodes[i].Slots) best = i;
        }
        return best;
    }
}
