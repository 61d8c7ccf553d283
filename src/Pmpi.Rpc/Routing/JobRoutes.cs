using System.Collections.Immutable;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Routing;

/// <summary>
/// PMPI's one route rule: which link serves each pair of ranks of a job, decided from the rank table alone, so every
/// rank, the master (<see cref="Reaches"/>), each gateway (<see cref="HopAt"/>) and <c>pmpi run --show-routes</c>
/// reach the same answer. From nearest to farthest: the rank itself; a peer on the same node through shared memory
/// (unless the job asked for network links only); a peer in the same domain, or in a domain the sender's domain
/// declares reachable, directly; any other peer through the sender's domain's gateway, which forwards to the peer's
/// domain's gateway, which forwards to the peer. Declared reachability is one-way: <c>&lt;domain name="a"
/// reachable="b"&gt;</c> lets a's ranks dial b's, not the reverse.
/// </summary>
public sealed class JobRoutes
{
    private readonly ImmutableArray<RankPlace> _ranks;
    private readonly Dictionary<string, HashSet<string>> _reachable = []; // by domain, the domains its ranks dial directly
    private readonly bool _networkOnly;

    /// <param name="ranks">Every rank's place, indexed by world rank.</param>
    /// <param name="reach">For each domain that declares any, the domains its ranks dial directly.</param>
    /// <param name="networkOnly">Ranks of one node talk over the network too (<c>pmpi run --links network</c>).</param>
    /// <exception cref="RouteException">An entry is not at its rank's index.</exception>
    public JobRoutes(ImmutableArray<RankPlace> ranks, IEnumerable<DomainReach> reach, bool networkOnly = false)
    {
        _networkOnly = networkOnly;
        for (int rank = 0; rank < ranks.Length; rank++)
        {
            if (ranks[rank].Rank != rank) throw new RouteException($"Entry {rank} of the rank table is for rank {ranks[rank].Rank}.");
        }
        _ranks = ranks;
        foreach (var entry in reach)
        {
            if (!_reachable.TryGetValue(entry.Domain, out var reached)) _reachable[entry.Domain] = reached = [];
            reached.UnionWith(entry.Reachable);
        }
    }

    /// <summary>Number of ranks in the job.</summary>
    public int Size => _ranks.Length;

    /// <summary>Where <paramref name="rank"/> runs.</summary>
    public RankPlace this[int rank] => _ranks[rank];

    /// <summary>Where every rank runs, indexed by world rank.</summary>
    public ImmutableArray<RankPlace> Places => _ranks;

    /// <summary>The routes of the rank table the master sent.</summary>
    /// <exception cref="RouteException">An entry is not at its rank's index.</exception>
    public static JobRoutes FromTable(RankTable table)
    {
        ArgumentNullException.ThrowIfNull(table);
        return new JobRoutes(
            [.. table.Ranks.Select(entry => new RankPlace(entry.Rank, entry.Node, entry.Domain, entry.Endpoint, entry.Gateway)
            {
                CertificatePin = entry.CertificateSha256.ToByteArray(),
            })],
            table.Reach,
            table.NetworkLinks);
    }

    /// <summary>The route from rank <paramref name="from"/> to rank <paramref name="to"/>.</summary>
    /// <exception cref="RouteException">
    /// The two ranks are in different domains, neither declared reachable nor both with a gateway; the message names
    /// both ranks and domains.
    /// </exception>
    public Route Resolve(int from, int to)
    {
        var source = _ranks[from];
        var destination = _ranks[to];
        if (from == to) return new Route(RouteKind.Self, source, destination);
        if (!_networkOnly && source.Node.Length > 0 && source.Node == destination.Node && source.Domain == destination.Domain)
            return new Route(RouteKind.SharedMemory, source, destination);
        if (Reaches(source.Domain, destination.Domain)) return new Route(RouteKind.Direct, source, destination);
        var missing = source.Gateway.Length == 0 ? source : destination.Gateway.Length == 0 ? destination : null;
        if (missing is not null)
        {
            throw new RouteException(
                $"Rank {from} ({source.DomainName}) cannot reach rank {to} ({destination.DomainName}): the domains are not declared " +
                $"reachable and {missing.DomainName} has no gateway; declare gateway=\"host:port\" on both domains, or reachable=\"{destination.Domain}\" on {source.DomainName}.");
        }
        return new Route(RouteKind.Gateway, source, destination);
    }

    /// <summary>The routes from <paramref name="from"/> to every rank, indexed by world rank; every error before any message is sent.</summary>
    /// <exception cref="RouteException">A peer cannot be reached (see <see cref="Resolve"/>).</exception>
    public ImmutableArray<Route> ResolveFrom(int from) => [.. Enumerable.Range(0, Size).Select(to => Resolve(from, to))];

    /// <summary>
    /// Whether what starts in domain <paramref name="from"/> dials domain <paramref name="to"/> directly, without
    /// gateways: they are one, or the computation declares <paramref name="to"/> reachable from <paramref name="from"/>.
    /// </summary>
    public bool Reaches(string from, string to) => from == to || (_reachable.TryGetValue(from, out var reached) && reached.Contains(to));

    /// <summary>
    /// What the gateway of <paramref name="gatewayDomain"/> does with a rank stream or control call from domain
    /// <paramref name="from"/> to domain <paramref name="to"/> that reached it: the last hop delivers it in its own
    /// domain, the first forwards it to the destination domain's gateway, and a gateway serving neither end refuses it.
    /// </summary>
    public static GatewayHop HopAt(string gatewayDomain, string from, string to) =>
        to == gatewayDomain ? GatewayHop.Deliver : from == gatewayDomain ? GatewayHop.ToDestinationGateway : GatewayHop.NotServed;
}

/// <summary>A gateway's part in a route (<see cref="JobRoutes.HopAt"/>).</summary>
public enum GatewayHop
{
    /// <summary>The destination is in the gateway's domain: hand it to the rank, agent or master there.</summary>
    Deliver,

    /// <summary>The source is in the gateway's domain: forward to the gateway of the destination's domain.</summary>
    ToDestinationGateway,

    /// <summary>Neither end is in the gateway's domain: refuse.</summary>
    NotServed,
}
