using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi nodes` prints one row per agent, and says which ones it could not reach.</summary>
public sealed class NodesCommandTests
{
    [Fact]
    public async Task Nodes_OneAgentServingOneUnreachable_PrintsWholeRowsAndFlagsTheUnreachableWithExitCode1()
    {
        // Arrange: a port nobody listens on stands for a node whose agent is down.
        await using var agent = await AgentProcess.StartAsync("node-a", slots: 3);
        string unreachable = $"127.0.0.1:{PmpiCli.FreePort()}";
        await using var nodes = PmpiCli.Start(["nodes", agent.Endpoint, unreachable]);

        // Act
        int code = await nodes.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var table = string.Join("\n", nodes.Stdout);
        Assert.True(code == 1, $"pmpi nodes exited with {code}, expected 1 for the unreachable agent.\n{nodes.Transcript}");
        var row = nodes.Stdout.SingleOrDefault(line => line.Contains(System.Environment.MachineName, StringComparison.Ordinal));
        Assert.True(row is not null, $"No row names this node ({System.Environment.MachineName}).\n{table}");
        Assert.Contains($" {agent.Endpoint} ", row); // the agent as dialled
        Assert.Contains(" 127.0.0.1 ", row);         // where its ranks listen (pmpi agent's default --rank-address)
        Assert.Contains($" {System.Environment.ProcessorCount} ", row);
        Assert.Contains(" 3 ", row);
        Assert.Contains(nodes.Stdout, line => line.Contains(unreachable, StringComparison.Ordinal) && line.Contains("unreachable", StringComparison.Ordinal)
            && line.Contains($"nothing listens at {unreachable} (connection refused)", StringComparison.Ordinal));
        Assert.DoesNotContain('\u001b', table); // no terminal escape codes into a pipe
    }

    [Fact]
    public async Task Nodes_AgentOfADomain_ShowsItsDomainAndGateway()
    {
        // Arrange
        await using var agent = await AgentProcess.StartAsync("node-a", slots: 1, domain: "campus-a", gateway: "gw-a.campus-a.example:7400");
        await using var nodes = PmpiCli.Start(["nodes", agent.Endpoint]);

        // Act
        int code = await nodes.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi nodes exited with {code}.\n{nodes.Transcript}");
        Assert.Contains(nodes.Stdout, line => line.Contains(" campus-a ", StringComparison.Ordinal) && line.Contains(" gw-a.campus-a.example:7400 ", StringComparison.Ordinal));
        Assert.Contains(nodes.Stdout, line => line.Contains(" gateway ", StringComparison.Ordinal));
    }
}
