namespace Pmpi.Collectives;

/// <summary>
/// Collectives that climb a communicator's topology (<see cref="CommunicatorTopology"/>): within each node first, then
/// among one leader per node within each domain, then among one leader per domain, and back down; each level runs
/// the flat algorithm of <see cref="CollectiveAlgorithms"/> on its group. So a broadcast or a reduction crosses
/// between two domains (a gateway pair) once per direction it needs, and between two nodes once, instead of
/// ⌈log2 n⌉ times per rank. Reductions regroup the operands, so they take this path only for commutative
/// operations (<see cref="Operation{T}.IsCommutative"/>); any other keeps the flat algorithm and its exact rank order.
/// </summary>
internal static class HierarchicalCollectives
{
    /// <summary>Up to the domain leaders and back: no rank leaves before every rank has come.</summary>
    public static void Barrier(CommunicatorTopology levels) => Allreduce(levels, (byte)0, static (first, _) => first);

    /// <summary>
    /// Climbs from the root to its domain's leader, then spreads by <paramref name="broadcast"/> (a flat algorithm:
    /// <see cref="CollectiveAlgorithms.Broadcast"/>, or for an array <see cref="CollectiveAlgorithms.BroadcastInto"/>)
    /// among domain leaders, to node leaders, to nodes.
    /// </summary>
    public static T Broadcast<T>(Intracommunicator comm, CommunicatorTopology levels, T value, int root, Func<Intracommunicator, T, int, T> broadcast)
    {
        int nodeLeader = levels.NodeLeaderOf(root), domainLeader = levels.DomainLeaderOf(root);
        value = Hand(comm, value, root, nodeLeader, CollectiveAlgorithms.BroadcastTag);
        value = Hand(comm, value, nodeLeader, domainLeader, CollectiveAlgorithms.BroadcastTag);
        if (levels.DomainLeaders is { } domainLeaders) value = broadcast(domainLeaders, value, levels.DomainIndexOf(root));
        if (levels.NodeLeaders is { } nodeLeaders) value = broadcast(nodeLeaders, value, 0);
        return broadcast(levels.Node, value, 0);
    }

    public static T Reduce<T>(Intracommunicator comm, CommunicatorTopology levels, T value, ReductionOperation<T> op, int root)
    {
        value = ReduceToDomainLeaders(levels, value, op);
        if (levels.DomainLeaders is { } domainLeaders) value = CollectiveAlgorithms.Reduce(domainLeaders, value, op, levels.DomainIndexOf(root));
        value = Hand(comm, value, levels.DomainLeaderOf(root), root, CollectiveAlgorithms.ReduceTag);
        return comm.Rank == root ? value : default!;
    }

    /// <summary>
    /// Each node's values combined at its leader; the node leaders of each domain combine theirs by the flat
    /// allreduce, then the domain leaders theirs across domains, whose result the node leaders of each domain get back
    /// from theirs; then each node from its leader.
    /// </summary>
    public static T Allreduce<T>(CommunicatorTopology levels, T value, ReductionOperation<T> op)
    {
        value = CollectiveAlgorithms.Reduce(levels.Node, value, op, 0);
        if (levels.NodeLeaders is { } nodeLeaders) value = CollectiveAlgorithms.Allreduce(nodeLeaders, value, op);
        if (levels.DomainLeaders is { } domainLeaders) value = CollectiveAlgorithms.Allreduce(domainLeaders, value, op);
        if (levels.NodeLeaders is { } leaders && levels.DomainSizes.Length > 1) value = CollectiveAlgorithms.Broadcast(leaders, value, 0);
        return CollectiveAlgorithms.Broadcast(levels.Node, value, 0);
    }

    /// <summary>
    /// <see cref="Allreduce{T}(CommunicatorTopology, T, ReductionOperation{T})"/> element-wise over arrays: among node
    /// and domain leaders, who are on different nodes, a long array goes by blocks
    /// (<see cref="CollectiveAlgorithms.AllreduceElementwise"/>) and is broadcast by blocks
    /// (<see cref="CollectiveAlgorithms.BroadcastInto"/>). A rank's own array is never written.
    /// </summary>
    public static T[] Allreduce<T>(CommunicatorTopology levels, T[] values, ReductionOperation<T> op)
    {
        var combined = CollectiveAlgorithms.Reduce(levels.Node, values, Elementwise.Of(op), 0); // null but on node leaders
        if (levels.NodeLeaders is { } nodeLeaders) combined = CollectiveAlgorithms.AllreduceElementwise(nodeLeaders, combined, op, commutative: true);
        if (levels.DomainLeaders is { } domainLeaders) combined = CollectiveAlgorithms.AllreduceElementwise(domainLeaders, combined, op, commutative: true);
        if (levels.NodeLeaders is { } leaders && levels.DomainSizes.Length > 1) combined = CollectiveAlgorithms.BroadcastInto(leaders, combined, 0);
        return CollectiveAlgorithms.BroadcastInto(levels.Node, combined, 0);
    }

    /// <summary>Every rank's value in rank order at <paramref name="root"/>, null elsewhere: gathered node by node, then domain by domain.</summary>
    public static T[]? Gather<T>(Intracommunicator comm, CommunicatorTopology levels, T value, int root)
    {
        var block = GatherToDomainLeaders(levels, value);
        int holder = levels.DomainLeaderOf(root);
        if (levels.DomainLeaders is { } domainLeaders)
            block = CollectiveAlgorithms.Gatherv(domainLeaders, block!, levels.DomainIndexOf(root), i => levels.DomainSizes[i]);
        block = Hand(comm, block, holder, root, CollectiveAlgorithms.GatherTag);
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

    /// <summary>Moves <paramref name="value"/> from rank <paramref name="from"/> to rank <paramref name="to"/> (nothing when they are one).</summary>
    private static T Hand<T>(Intracommunicator comm, T value, int from, int to, int tag)
    {
        if (from == to) return value;
        if (comm.Rank == from) CollectiveAlgorithms.Send(comm, value, to, tag);
        else if (comm.Rank == to) value = CollectiveAlgorithms.Receive<T>(comm, from, tag);
        return value;
    }
}
