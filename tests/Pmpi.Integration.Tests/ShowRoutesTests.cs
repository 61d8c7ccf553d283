using System.Text.RegularExpressions;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run --show-routes` prints the route of every ordered pair of ranks, as the ranks resolve it, and runs nothing.</summary>
public sealed partial class ShowRoutesTests
{
    [Theory]
    [InlineData(new string[0], "shared memory")]
    [InlineData(new[] { "--links", "network" }, "direct")]
    public async Task ShowRoutes_ThreeRanksOnOneNode_PrintsNinePairsSharedMemoryUnlessNetworkAsked(string[] links, string between)
    {
        // Act
        await using var run = PmpiCli.Start(["run", "--show-routes", .. links, "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "exit", "0"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run --show-routes exited with {code}.\n{run.Transcript}");
        var routes = Parse(run.Stdout);
        Assert.Equal(9, routes.Count);
        for (int from = 0; from < 3; from++)
            for (int to = 0; to < 3; to++)
                Assert.Equal(from == to ? "self" : between, routes[(from, to)]);
        Assert.DoesNotContain(run.Stderr, line => line.Contains("launched", StringComparison.Ordinal));
    }

    [Fact]
    public async Task ShowRoutes_TwoDomainsWithGateways_PrintsViaGatewaysBetweenDomainsAndLaunchesNothing()
    {
        // Arrange: agents that do not exist, so anything launched would fail the run.
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "launched.txt");
        var file = scratch.Write("two-domains.xml", $"""
            <computation name="campuses" xmlns="urn:pmpi:computation:v1">
              <domain name="campus-a" gateway="gw-a:7400"/>
              <domain name="campus-b" gateway="gw-b:7400"/>
              <node name="a1" agent="127.0.0.1:9" domain="campus-a" slots="2"/>
              <node name="b1" agent="127.0.0.1:10" domain="campus-b" slots="2"/>
              <ranks program="{PmpiCli.TestRanksDll}" count="4" args="marker {marker}"/>
            </computation>
            """);

        // Act
        await using var run = PmpiCli.Start(["run", "--show-routes", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: ranks 0-1 on a1 in campus-a, 2-3 on b1 in campus-b; each node's pair shares memory.
        Assert.True(code == 0, $"pmpi run --show-routes exited with {code}.\n{run.Transcript}");
        var routes = Parse(run.Stdout);
        Assert.Equal(16, routes.Count);
        Assert.Equal("shared memory", routes[(0, 1)]);
        Assert.Equal("shared memory", routes[(3, 2)]);
        Assert.Equal("via gateways https://gw-a:7400 -> https://gw-b:7400", routes[(1, 2)]);
        Assert.Equal("via gateways https://gw-b:7400 -> https://gw-a:7400", routes[(3, 0)]);
        Assert.Contains(run.Stdout, line => line.StartsWith("0 (a1, campus-a) -> 2 (b1, campus-b): via gateways", StringComparison.Ordinal));
        Assert.False(File.Exists(marker), "A rank was launched by --show-routes.");
    }

    /// <summary>The printed routes by (from, to).</summary>
    private static Dictionary<(int From, int To), string> Parse(IEnumerable<string> lines)
    {
        var routes = new Dictionary<(int, int), string>();
        foreach (var line in lines)
        {
            var match = RouteLine().Match(line);
            Assert.True(match.Success, $"Not a route line: '{line}'");
            routes.Add((int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture), int.Parse(match.Groups[2].Value, System.Globalization.CultureInfo.InvariantCulture)), match.Groups[3].Value);
        }
        return routes;
    }

    [GeneratedRegex(@"^(\d+) \([^)]*\) -> (\d+) \([^)]*\): (.+)$")]
    private static partial Regex RouteLine();
}
