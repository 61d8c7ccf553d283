using System.Collections.Immutable;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Routing;

/// <summary>The resolver's decision table: which link serves each pair of ranks, from the rank table alone.</summary>
public sealed class JobRoutesTests
{
    private const string GatewayA = "http://gw-a:7400";
    private const string GatewayB = "http://gw-b:7400";

    [Fact]
    public void Resolve_SameRank_IsSelf()
    {
        var routes = Routes([Place(0, "a", GatewayA)]);

        Assert.Equal(RouteKind.Self, routes.Resolve(0, 0).Kind);
        Assert.Equal("", routes.Resolve(0, 0).Target);
    }

    [Fact]
    public void Resolve_SameDomain_IsDirectToThePeersEndpoint()
    {
        var routes = Routes([Place(0, "a", GatewayA), Place(1, "a", GatewayA)]);

        var route = routes.Resolve(0, 1);

        Assert.Equal(RouteKind.Direct, route.Kind);
        Assert.Equal("http://rank1:5001", route.Target);
        Assert.Equal("direct", route.ToString());
    }

    [Fact]
    public void Resolve_SameNode_IsSharedMemoryWithNothingToDial()
    {
        var routes = Routes([Place(0, "a", GatewayA) with { Node = "n" }, Place(1, "a", GatewayA) with { Node = "n" }]);

        var route = routes.Resolve(1, 0);

        Assert.Equal(RouteKind.SharedMemory, route.Kind);
        Assert.Equal("", route.Target);
        Assert.Equal("shared memory", route.ToString());
    }

    [Fact]
    public void Resolve_SameNodeWithNetworkLinksOnly_IsDirect()
    {
        var routes = new JobRoutes([Place(0, "", "") with { Node = "n" }, Place(1, "", "") with { Node = "n" }], [], networkOnly: true);

        Assert.Equal(RouteKind.Direct, routes.Resolve(0, 1).Kind);
    }

    [Fact]
    public void Resolve_NodeNamedAlikeInAnotherDomain_IsNotSharedMemory()
    {
        // Two domains may both call a machine "n1"; only a node of one domain is one machine.
        var routes = Routes([Place(0, "a", GatewayA) with { Node = "n1" }, Place(1, "b", GatewayB) with { Node = "n1" }]);

        Assert.Equal(RouteKind.Gateway, routes.Resolve(0, 1).Kind);
    }

    [Fact]
    public void Resolve_NoDomainsAndNoGateways_IsDirect()
    {
        var routes = Routes([Place(0, "", ""), Place(1, "", "")]);

        Assert.Equal(RouteKind.Direct, routes.Resolve(1, 0).Kind);
    }

    [Fact]
    public void Resolve_DifferentDomains_GoesToOwnGatewayNamingBothGateways()
    {
        var routes = Routes([Place(0, "a", GatewayA), Place(1, "b", GatewayB)]);

        var there = routes.Resolve(0, 1);
        var back = routes.Resolve(1, 0);

        Assert.Equal(RouteKind.Gateway, there.Kind);
        Assert.Equal(GatewayA, there.Target);
        Assert.Equal($"via gateways {GatewayA} -> {GatewayB}", there.ToString());
        Assert.Equal(RouteKind.Gateway, back.Kind);
        Assert.Equal(GatewayB, back.Target);
    }

    [Fact]
    public void Resolve_DomainDeclaredReachable_IsDirectOnlyInTheDeclaredDirection()
    {
        var routes = Routes([Place(0, "a", GatewayA), Place(1, "b", GatewayB)], ("a", "b"));

        Assert.Equal(RouteKind.Direct, routes.Resolve(0, 1).Kind);
        Assert.Equal("http://rank1:5001", routes.Resolve(0, 1).Target);
        Assert.Equal(RouteKind.Gateway, routes.Resolve(1, 0).Kind);
    }

    [Fact]
    public void Resolve_ReachableWithoutGateways_IsDirect()
    {
        var routes = Routes([Place(0, "a", ""), Place(1, "b", "")], ("a", "b"), ("b", "a"));

        Assert.Equal(RouteKind.Direct, routes.Resolve(0, 1).Kind);
        Assert.Equal(RouteKind.Direct, routes.Resolve(1, 0).Kind);
    }

    [Theory]
    [InlineData("", GatewayB, "domain 'a'")]
    [InlineData(GatewayA, "", "domain 'b'")]
    public void Resolve_DifferentDomainsMissingAGateway_FailsNamingBothRanksAndDomains(string gatewayA, string gatewayB, string missing)
    {
        var routes = Routes([Place(0, "a", gatewayA), Place(1, "b", gatewayB)]);

        var error = Assert.Throws<RouteException>(() => routes.Resolve(0, 1));

        Assert.Contains("Rank 0 (domain 'a') cannot reach rank 1 (domain 'b')", error.Message);
        Assert.Contains($"{missing} has no gateway", error.Message);
    }

    [Fact]
    public void Resolve_RankWithoutDomainBesideADomain_FailsNamingNoDomain()
    {
        var routes = Routes([Place(0, "", ""), Place(1, "b", GatewayB)]);

        var error = Assert.Throws<RouteException>(() => routes.Resolve(1, 0));

        Assert.Contains("Rank 1 (domain 'b') cannot reach rank 0 (no domain)", error.Message);
    }

    [Fact]
    public void ResolveFrom_OneUnreachablePeer_FailsBeforeReturningAnyRoute()
    {
        var routes = Routes([Place(0, "a", GatewayA), Place(1, "a", GatewayA), Place(2, "c", "")]);

        var error = Assert.Throws<RouteException>(() => routes.ResolveFrom(0));

        Assert.Contains("rank 2 (domain 'c')", error.Message);
    }

    [Fact]
    public void FromTable_EntriesAndReach_ResolveAsDeclared()
    {
        var table = new RankTable();
        table.Ranks.Add(new RankEntry { Rank = 0, Node = "n1", Domain = "a", Endpoint = "http://rank0:5000", Gateway = GatewayA });
        table.Ranks.Add(new RankEntry { Rank = 1, Node = "n2", Domain = "b", Endpoint = "http://rank1:5001", Gateway = GatewayB });
        table.Ranks.Add(new RankEntry { Rank = 2, Node = "n3", Domain = "c", Endpoint = "http://rank2:5002", Gateway = "http://gw-c:7400" });
        table.Reach.Add(new DomainReach { Domain = "a", Reachable = { "c" } });

        var routes = JobRoutes.FromTable(table);

        Assert.Equal([RouteKind.Self, RouteKind.Gateway, RouteKind.Direct], routes.ResolveFrom(0).Select(route => route.Kind));
        Assert.Equal("n2", routes[1].Node);
    }

    [Theory]
    [InlineData(false, "shared memory")]
    [InlineData(true, "direct")]
    public void FromTable_NetworkLinks_DecidesSameNodePairs(bool networkLinks, string expected)
    {
        var table = new RankTable { NetworkLinks = networkLinks };
        table.Ranks.Add(new RankEntry { Rank = 0, Node = "n1", Endpoint = "http://rank0:5000" });
        table.Ranks.Add(new RankEntry { Rank = 1, Node = "n1", Endpoint = "http://rank1:5001" });

        Assert.Equal(expected, JobRoutes.FromTable(table).Resolve(0, 1).ToString());
    }

    [Fact]
    public void FromTable_EntryOutOfOrder_FailsNamingIt()
    {
        var table = new RankTable();
        table.Ranks.Add(new RankEntry { Rank = 1 });

        var error = Assert.Throws<RouteException>(() => JobRoutes.FromTable(table));

        Assert.Contains("Entry 0 of the rank table is for rank 1", error.Message);
    }

    [Fact]
    public void Reaches_DeclaredReachability_IsOneWayAndADomainReachesItself()
    {
        var routes = Routes([Place(0, "a", GatewayA), Place(1, "b", GatewayB)], ("a", "b"));

        Assert.True(routes.Reaches("a", "b"));
        Assert.False(routes.Reaches("b", "a"));
        Assert.True(routes.Reaches("b", "b"));
    }

    [Theory]
    [InlineData("b", "a", "b", GatewayHop.Deliver)]
    [InlineData("a", "a", "b", GatewayHop.ToDestinationGateway)]
    [InlineData("c", "a", "b", GatewayHop.NotServed)]
    public void HopAt_GatewayOfADomain_DeliversInItsOwnForwardsFromItsOwnRefusesTheRest(string gateway, string from, string to, GatewayHop expected) =>
        Assert.Equal(expected, JobRoutes.HopAt(gateway, from, to));

    private static RankPlace Place(int rank, string domain, string gateway) => new(rank, $"node{rank}", domain, $"http://rank{rank}:{5000 + rank}", gateway);

    private static JobRoutes Routes(ImmutableArray<RankPlace> ranks, params (string From, string To)[] reachable) =>
        new(ranks, reachable.Select(pair => new DomainReach { Domain = pair.From, Reachable = { pair.To } }));
}
