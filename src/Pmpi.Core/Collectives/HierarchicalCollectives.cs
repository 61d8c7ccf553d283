using Pmpi.Matching;

namespace Pmpi.Collectives;

/// <summary>
/// Collectives that climb a communicator's topology (<see cref="CommunicatorTopology"/>): within each node first, then
/// among one leader per node within each domain, then among one leader per domain, and back down; each level runs
/// the flat algorithm of <see cref="CollectiveAlgorithms"/> on its group. So a broadcast or a reduction crosses
/// between two domains (a gateway pair) once per direction it needs, and between two nodes once, instead of
/// ⌈log2 n⌉ times per rank. Reductions combine level by level, which is rank order when the levels keep it
/// (<see cref="CommunicatorTopology.KeepsRankOrder"/>) and a regrouping a commutative operation allows
/// (<see cref="Operation{T}.IsCommutative"/>) otherwise; for any other operation the values climb the same levels
/// as lists, concatenated, and are combined in rank order where the result is due. Every rank so takes the same
/// levels whatever operation it passed, and ranks that passed different ones fail on the tags (CollectiveTag).
/// </summary>
internal static class HierarchicalCollectives
{
    /// <summary>Up to the domain leaders and back: no rank leaves before every rank has come.</summary>
    public static void Barrier(CommunicatorTopology levels) => AllreduceByLevels(levels, (byte)0, static (first, _) => first);

    /// <summary>
    /// Climbs from the root to its domain's leader, then spreads by <paramref name="broadcast"/> (a flat algorithm:
    /// <see cref="CollectiveAlgorithms.Broadcast"/>, or for an array <see cref="CollectiveAlgorithms.BroadcastInto"/>)
    /// among domain leaders, to node leaders, to nodes.
    /// </summary>
    public static T Broadcast<T>(Intracommunicator comm, CommunicatorTopology levels, T value, int root, Func<Intracommunicator, T, int, T> broadcast)
    {
        int nodeLeader = levels.NodeLeaderOf(root), domainLeader = levels.DomainLeaderOf(root);
        int tag = CollectiveTag.Of(CollectiveStep.Broadcast, root: root);
        value = Hand(comm, value, root, nodeLeader, tag);
        value = Hand(comm, value, nodeLeader, domainLeader, tag);
        if (levels.DomainLeaders is { } domainLeaders) value = broadcast(domainLeaders, value, levels.DomainIndexOf(root));
        if (levels.NodeLeaders is { } nodeLeaders) value = broadcast(nodeLeaders, value, 0);
        return broadcast(levels.Node, value, 0);
    }

    public static T Reduce<T>(Intracommunicator comm, CommunicatorTopology levels, T value, ReductionOperation<T> op, int root)
    {
        if (CombinesByLevels(levels, op)) return ReduceByLevels(comm, levels, value, op, root);
        var values = ReduceByLevels(comm, levels, [value], Concatenation<T>(), root);
        return comm.Rank == root ? InRankOrder(levels, values).Aggregate((first, second) => op(first, second)) : default!;
    }

    public static T Allreduce<T>(CommunicatorTopology levels, T value, ReductionOperation<T> op) =>
        CombinesByLevels(levels, op) ? AllreduceByLevels(levels, value, op)
        : InRankOrder(levels, AllreduceByLevels(levels, [value], Concatenation<T>())).Aggregate((first, second) => op(first, second));

    private static T ReduceByLevels<T>(Intracommunicator comm, CommunicatorTopology levels, T value, ReductionOperation<T> op, int root)
    {
        value = ReduceToDomainLeaders(levels, value, op);
        if (levels.DomainLeaders is { } domainLeaders) value = CollectiveAlgorithms.Reduce(domainLeaders, value, op, levels.DomainIndexOf(root));
        value = Hand(comm, value, levels.DomainLeaderOf(root), root, CollectiveTag.Of(CollectiveStep.Reduce, OperationCode.Of(op), root));
        return comm.Rank == root ? value : default!;
    }

    private static T AllreduceByLevels<T>(CommunicatorTopology levels, T value, ReductionOperation<T> op)
    {
        value = ReduceToDomainLeaders(levels, value, op);
        if (levels.DomainLeaders is { } domainLeaders) value = CollectiveAlgorithms.Allreduce(domainLeaders, value, op);
        if (levels.NodeLeaders is { } nodeLeaders) value = CollectiveAlgorithms.Broadcast(nodeLeaders, value, 0);
        return CollectiveAlgorithms.Broadcast(levels.Node, value, 0);
    }

    /// <summary>
    /// Element-wise over arrays. A long array, one the node leaders would allreduce by blocks
    /// (<see cref="CollectiveAlgorithms.AllreduceGoesByBlocks"/>), they allreduce so among themselves, which sends
    /// each link about twice the array; a shorter one they reduce to their domain's leader and get back by broadcast,
    /// which measured faster (docs/bench-log/2026-11-26-broadcast-by-blocks-between-nodes.md). The domain leaders'
    /// level may go by blocks too. A rank's own array is never written.
    /// </summary>
    public static T[] Allreduce<T>(CommunicatorTopology levels, T[] values, ReductionOperation<T> op)
    {
        var elementwise = Elementwise.Of(op);
        if (!CombinesByLevels(levels, elementwise))
            return InRankOrder(levels, AllreduceByLevels(levels, [values], Concatenation<T[]>())).Aggregate((first, second) => elementwise(first, second));
        var combined = CollectiveAlgorithms.Reduce(levels.Node, values, elementwise, 0); // null but on node leaders
        var nodeLeaders = levels.NodeLeaders;
        bool leadersByBlocks = nodeLeaders is not null && CollectiveAlgorithms.AllreduceGoesByBlocks(nodeLeaders, combined);
        if (nodeLeaders is not null)
        {
            combined = leadersByBlocks
                ? CollectiveAlgorithms.AllreduceElementwise(nodeLeaders, combined, op)
                : CollectiveAlgorithms.Reduce(nodeLeaders, combined, elementwise, 0);
        }
        if (levels.DomainLeaders is { } domainLeaders) combined = CollectiveAlgorithms.AllreduceElementwise(domainLeaders, combined, op);
        // The node leaders that did not take part in the last level get its result from their domain's leader.
        if (nodeLeaders is not null && (!leadersByBlocks || levels.DomainSizes.Length > 1)) combined = CollectiveAlgorithms.BroadcastInto(nodeLeaders, combined, 0);
        return CollectiveAlgorithms.BroadcastInto(levels.Node, combined, 0);
    }

    /// <summary>Every rank's value in rank order at <paramref name="root"/>, null elsewhere: gathered node by node, then domain by domain.</summary>
    public static T[]? Gather<T>(Intracommunicator comm, CommunicatorTopology levels, T value, int root)
    {
        var block = GatherToDomainLeaders(levels, value);
        int holder = levels.DomainLeaderOf(root);
        if (levels.DomainLeaders is { } domainLeaders)
            block = CollectiveAlgorithms.Gatherv(domainLeaders, block!, levels.DomainIndexOf(root), i => levels.DomainSizes[i]);
        block = Hand(comm, block, holder, root, CollectiveTag.Of(CollectiveStep.Gather, root: root));
        return comm.Rank == root ? InRankOrder(levels, block!) : null;
    }

    /// <summary>Every rank's value in rank order on every rank: gathered up to the domain leaders, exchanged among them, spread down.</summary>
    public static T[] Allgather<T>(CommunicatorTopology levels, T value)
    {
        var block = GatherToDomainLeaders(levels, value);
        if (levels.DomainLeaders is { } domainLeaders) block = CollectiveAlgorithms.Allgatherv(domainLeaders, block!);
        if (levels.NodeLeaders is { } nodeLeaders) block = CollectiveAlgorithms.Broadcast(nodeLeaders, block, 0);
        return InRankOrder(levels, CollectiveAlgorithms.Broadcast(levels.Node, block, 0)!);
    }

    /// <summary>A node's values at its leader, then a domain's at its leader, in <see cref="CommunicatorTopology.Order"/>; null elsewhere.</summary>
    private static T[]? GatherToDomainLeaders<T>(CommunicatorTopology levels, T value)
    {
        var block = CollectiveAlgorithms.Gatherv(levels.Node, [value], 0, _ => 1);
        return levels.NodeLeaders is { } nodeLeaders
            ? CollectiveAlgorithms.Gatherv(nodeLeaders, block!, 0, i => levels.NodeSizes[i])
            : block;
    }

    private static T[] InRankOrder<T>(CommunicatorTopology levels, T[] climbed)
    {
        var result = new T[climbed.Length];
        for (int i = 0; i < climbed.Length; i++) result[levels.Order[i]] = climbed[i];
        return result;
    }

    /// <summary>Each node's values combined at its leader, then each domain's at its leader; what other ranks hold after is meaningless.</summary>
    private static T ReduceToDomainLeaders<T>(CommunicatorTopology levels, T value, ReductionOperation<T> op)
    {
        value = CollectiveAlgorithms.Reduce(levels.Node, value, op, 0);
        return levels.NodeLeaders is { } nodeLeaders ? CollectiveAlgorithms.Reduce(nodeLeaders, value, op, 0) : value;
    }

    /// <summary>Whether <paramref name="op"/> may combine level by level: in rank order, or regrouped where it commutes.</summary>
    private static bool CombinesByLevels<T>(CommunicatorTopology levels, ReductionOperation<T> op) =>
        levels.KeepsRankOrder || (op.Target is ElementwiseOperation elementwise ? elementwise.Commutes : Operation<T>.IsCommutative(op));

    /// <summary>Lists joined in level order, lower first: the values a non-commuting operation combines in rank order at the end.</summary>
    private static ReductionOperation<T[]> Concatenation<T>() => static (lower, higher) => [.. lower, .. higher];

    /// <summary>Moves <paramref name="value"/> from rank <paramref name="from"/> to rank <paramref name="to"/> (nothing when they are one).</summary>
    private static T Hand<T>(Intracommunicator comm, T value, int from, int to, int tag)
    {
        if (from == to) return value;
        if (comm.Rank == from) CollectiveAlgorithms.Send(comm, value, to, tag);
        else if (comm.Rank == to) value = CollectiveAlgorithms.Receive<T>(comm, from, tag);
        return value;
    }
}
