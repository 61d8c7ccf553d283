using Pmpi.Agent.Computation;
using static Pmpi.Agent.Tests.Computation.JobText;

namespace Pmpi.Agent.Tests.Computation;

public class RankTableLayoutTests
{
    [Fact]
    public void Build_TwoDomains_FillsEachRanksNodeDomainAndGateway()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <domain name="campus-a" gateway="gw-a:7400" reachable="campus-b"/>
              <domain name="campus-b" gateway="gw-b:7400"/>
              <node name="a1" agent="a:1" domain="campus-a" slots="1"/>
              <node name="b1" agent="b:1" domain="campus-b" slots="2"/>
              <ranks program="p.dll" count="3"/>
            </computation>
            """;
        var computation = Parse(xml);

        // Act
        var table = RankTableLayout.Build(computation, Placement.Assign(computation));

        // Assert
        Assert.Equal([0, 1, 2], table.Ranks.Select(entry => entry.Rank));
        Assert.Equal(["a1", "b1", "b1"], table.Ranks.Select(entry => entry.Node));
        Assert.Equal(["campus-a", "campus-b", "campus-b"], table.Ranks.Select(entry => entry.Domain));
        Assert.Equal(["http://gw-a:7400", "http://gw-b:7400", "http://gw-b:7400"], table.Ranks.Select(entry => entry.Gateway));
        Assert.All(table.Ranks, entry => Assert.Equal("", entry.Endpoint));
        var reach = Assert.Single(table.Reach);
        Assert.Equal("campus-a", reach.Domain);
        Assert.Equal(["campus-b"], reach.Reachable);
    }

    [Fact]
    public void Build_NoNodes_PutsEveryRankOnTheLocalNodeWithoutDomain()
    {
        // Arrange
        var computation = Parse("""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <ranks program="p.dll" count="2"/>
            </computation>
            """);

        // Act
        var table = RankTableLayout.Build(computation, Placement.Assign(computation));

        // Assert
        Assert.All(table.Ranks, entry =>
        {
            Assert.Equal(RankTableLayout.LocalNode, entry.Node);
            Assert.Equal("", entry.Domain);
            Assert.Equal("", entry.Gateway);
        });
        Assert.Empty(table.Reach);
    }
}
