using System.Collections.Immutable;
using Pmpi.Rpc.Routing;

namespace Pmpi.Collectives;

/// <summary>
/// How a communicator's members sit on nodes and domains, for the topology-aware collectives: this rank's node
/// group and, on leaders, the group of its domain's node leaders and the group of domain leaders. A node's (domain's)
/// leader is its lowest rank. Each level is a communicator of its own over some of the members, in rank order, with
/// a context of its own derived from the parent's (<see cref="LevelContext"/>), so the levels' messages and the
/// parent's never meet, and no message is needed to set the levels up: every member computes them from the table.
/// </summary>
internal sealed class CommunicatorTopology
{
    private readonly int[] _nodeLeader;   // by rank: the rank leading its node
    private readonly int[] _domainLeader; // by rank: the rank leading its domain
    private readonly int[] _domainLeaders; // the domain leaders' ranks, in rank order

    private CommunicatorTopology(Intracommunicator comm, int[] nodeOf, int[] domainOf)
    {
        int size = comm.Size, rank = comm.Rank;
        _nodeLeader = new int[size];
        _domainLeader = new int[size];
        for (int r = size - 1; r >= 0; r--)
        {
            _nodeLeader[r] = Array.IndexOf(nodeOf, nodeOf[r]);
            _domainLeader[r] = Array.IndexOf(domainOf, domainOf[r]);
        }
        _domainLeaders = [.. Enumerable.Range(0, size).Where(r => _domainLeader[r] == r)];
        // By rank: how many ranks its node (domain) holds, if it leads one.
        var nodeSizes = new int[size];
        var domainSizes = new int[size];
        for (int r = 0; r < size; r++)
        {
            nodeSizes[_nodeLeader[r]]++;
            domainSizes[_domainLeader[r]]++;
        }
        // The order gathers climb in: domain by domain, node leader by node leader within it, rank by rank within a node.
        Order = [.. _domainLeaders.SelectMany(domain => Enumerable.Range(0, size).Where(r => _nodeLeader[r] == r && _domainLeader[r] == domain))
            .SelectMany(node => Enumerable.Range(0, size).Where(r => _nodeLeader[r] == node))];
        KeepsRankOrder = Order.Select((rank, i) => rank == i).All(inPlace => inPlace);
        Node = Level(comm, 0, [.. Enumerable.Range(0, size).Where(r => nodeOf[r] == nodeOf[rank])]);
        if (_nodeLeader[rank] == rank)
        {
            int[] nodeLeaders = [.. Enumerable.Range(0, size).Where(r => _nodeLeader[r] == r && domainOf[r] == domainOf[rank])];
            NodeLeaders = Level(comm, 1, nodeLeaders);
            NodeSizes = [.. nodeLeaders.Select(leader => nodeSizes[leader])];
        }
        if (_domainLeader[rank] == rank) DomainLeaders = Level(comm, 2, _domainLeaders);
        DomainSizes = [.. _domainLeaders.Select(leader => domainSizes[leader])];
    }

    /// <summary>The members on this rank's node; its leader is rank 0 of it.</summary>
    public Intracommunicator Node { get; }

    /// <summary>On a node leader: the node leaders of its domain, the domain's leader first; null elsewhere.</summary>
    public Intracommunicator? NodeLeaders { get; }

    /// <summary>On a domain leader: every domain's leader; null elsewhere.</summary>
    public Intracommunicator? DomainLeaders { get; }

    /// <summary>
    /// Every rank, in the order a gather by levels concatenates their blocks: the domains by their leaders, within each
    /// its nodes by their leaders, within each node by rank.
    /// </summary>
    public int[] Order { get; }

    /// <summary>
    /// Whether <see cref="Order"/> is rank order: every node's ranks consecutive, and every domain's nodes. Combining
    /// by levels then combines in rank order, which any associative operation allows.
    /// </summary>
    public bool KeepsRankOrder { get; }

    /// <summary>On a node leader: how many ranks each node of <see cref="NodeLeaders"/> holds, in its order; empty elsewhere.</summary>
    public int[] NodeSizes { get; } = [];

    /// <summary>How many ranks each domain holds, in the order of <see cref="DomainLeaders"/>.</summary>
    public int[] DomainSizes { get; }

    /// <summary>The rank leading <paramref name="rank"/>'s node.</summary>
    public int NodeLeaderOf(int rank) => _nodeLeader[rank];

    /// <summary>The rank leading <paramref name="rank"/>'s domain.</summary>
    public int DomainLeaderOf(int rank) => _domainLeader[rank];

    /// <summary>Where <paramref name="rank"/>'s domain leader is among the domain leaders.</summary>
    public int DomainIndexOf(int rank) => Array.IndexOf(_domainLeaders, _domainLeader[rank]);

    /// <summary>
    /// The topology of <paramref name="comm"/> from where each world rank runs (<paramref name="places"/>, indexed by
    /// world rank), or null when levels would gain nothing: all members on one node, or each on its own node in one
    /// domain, or where ranks run is not known. Every member decides alike from the same table.
    /// </summary>
    public static CommunicatorTopology? Of(Intracommunicator comm, ImmutableArray<RankPlace> places)
    {
        if (places.IsDefaultOrEmpty) return null;
        var members = comm.Members;
        // By member: the first member on its node, and in its domain. Every rank runs this as its world is made,
        // so it keys by strings: LINQ over (domain, node) tuples would be compiled at run time, at the job's start.
        var nodeOf = new int[members.Length];
        var domainOf = new int[members.Length];
        var firstOnNode = new Dictionary<string, int>();
        var firstInDomain = new Dictionary<string, int>();
        for (int member = 0; member < members.Length; member++)
        {
            var place = places[members[member]];
            nodeOf[member] = FirstOf(firstOnNode, place.Machine, member);
            domainOf[member] = FirstOf(firstInDomain, place.Domain, member);
        }
        int nodeCount = firstOnNode.Count, domainCount = firstInDomain.Count;
        bool nodesShared = nodeCount > 1 && nodeCount < members.Length;
        bool domainsShared = domainCount > 1 && domainCount < nodeCount;
        if (!nodesShared && !domainsShared) return null;
        return new CommunicatorTopology(comm, nodeOf, domainOf);

        static int FirstOf(Dictionary<string, int> first, string key, int member) => first.TryAdd(key, member) ? member : first[key];
    }

    /// <summary>Whether <paramref name="comm"/>'s members run on more than one node; false where that is not known.</summary>
    public static bool SpansNodes(Intracommunicator comm, ImmutableArray<RankPlace> places)
    {
        if (places.IsDefaultOrEmpty) return false;
        var machine = places[comm.Members[0]].Machine;
        foreach (var member in comm.Members)
        {
            if (places[member].Machine != machine) return true;
        }
        return false;
    }

    /// <summary>
    /// The context of <paramref name="level"/> (0 node, 1 node leaders, 2 domain leaders) of the communicator whose
    /// context is <paramref name="parent"/>: negative, where context agreement never allocates, and distinct for
    /// every (parent, level); like any context, even, with the next odd one for its collective traffic.
    /// </summary>
    public static int LevelContext(int parent, int level) => -(parent / 2 * 6 + level * 2 + 2);

    private static Intracommunicator Level(Intracommunicator comm, int level, int[] ranks)
    {
        var members = comm.Members.ToArray();
        return new Intracommunicator(comm.Runtime, LevelContext(comm.Context, level), [.. ranks.Select(r => members[r])], Array.IndexOf(ranks, comm.Rank), comm.Sequence);
    }
}
