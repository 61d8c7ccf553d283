using System.Collections.Immutable;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Computation;

/// <summary>
/// The rank table as the master knows it before launch: every rank's node, domain and gateway from the placement and
/// the computation's domains, and which domains reach which directly. Registration only adds each rank's endpoint.
/// <c>pmpi run --show-routes</c> resolves routes from this same table, so what it prints is what the ranks will use.
/// </summary>
public static class RankTableLayout
{
    /// <summary>The node name of the ranks of a computation that declares no nodes: the master's own agent.</summary>
    public const string LocalNode = "local";

    /// <summary>The table for <paramref name="placement"/> of <paramref name="computation"/>, with every endpoint still empty.</summary>
    /// <param name="computation">The computation.</param>
    /// <param name="placement">Which node runs each rank.</param>
    /// <param name="gatewayScheme">How gateways are dialled: "https" in a cluster with a credential (gateways speak mutual TLS), "http" without.</param>
    public static RankTable Build(ComputationDefinition computation, ImmutableArray<RankAssignment> placement, string gatewayScheme = "http")
    {
        ArgumentNullException.ThrowIfNull(computation);
        var gateways = computation.Domains.ToDictionary(domain => domain.Name, domain => domain.Gateway is { } gateway ? $"{gatewayScheme}://{gateway}" : "", StringComparer.Ordinal);
        var table = new RankTable();
        foreach (var assignment in placement)
        {
            var domain = assignment.Node?.Domain ?? "";
            table.Ranks.Add(new RankEntry
            {
                Rank = assignment.WorldRank,
                Node = assignment.Node?.Name ?? LocalNode,
                Domain = domain,
                Gateway = gateways.GetValueOrDefault(domain, ""),
            });
        }
        foreach (var domain in computation.Domains.Where(domain => !domain.Reachable.IsEmpty))
            table.Reach.Add(new DomainReach { Domain = domain.Name, Reachable = { domain.Reachable } });
        return table;
    }
}
