using System.Text.RegularExpressions;

namespace Pmpi.Windows.Tests;

/// <summary>
/// One computation across a Linux node and a Windows node: a `pmpi agent` of the Linux build and one of the Windows
/// build under Wine, each running two ranks of its own build of the same program. The computation file names the
/// Windows program by its Windows path, which the Linux submitter passes to the Windows node as written. `pmpi nodes`
/// then describes both.
/// </summary>
[Collection(WindowsBuild.Collection)]
public sealed partial class MixedSystemsTests(WindowsBuild windows)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    [WineFact]
    public async Task Run_TwoRanksOnALinuxNodeAndTwoOnAWindowsNode_RingSsendBigMessageAndCollectivesPass()
    {
        // Arrange: both agents on loopback, in cleartext (Wine cannot load the cluster credential's keys: see
        // docs/architecture.md, *Windows*).
        await using var linux = ChildProcess.Start(WindowsBuild.DotnetHost, [Beside("pmpi.dll"), "agent", "--port", "0", "--slots", "2", "--insecure"]);
        await using var windowsAgent = windows.Start("agent", "--port", "0", "--slots", "2", "--insecure", "--heartbeat-timeout", "30");
        string linuxAgent = await ListeningAddress(linux), windowsAddress = await ListeningAddress(windowsAgent);
        var file = Path.Combine(windows.Root, "mixed.xml");
        await File.WriteAllTextAsync(file, $"""
            <computation name="mixed" timeout="00:01:30" xmlns="urn:pmpi:computation:v1">
              <node name="linux" agent="{linuxAgent}" slots="2"/>
              <node name="windows" agent="{windowsAddress}" slots="2"/>
              <ranks program="{Beside("Pmpi.TestRanks.dll")}" count="2" node="linux" args="domains"/>
              <ranks program="{windows.TestRanks}" count="2" node="windows" args="domains"/>
            </computation>
            """);

        // Act
        await using var routes = ChildProcess.Start(WindowsBuild.DotnetHost, [Beside("pmpi.dll"), "run", "--show-routes", file]);
        int routesCode = await routes.WaitForExitAsync(Timeout);
        await using var run = ChildProcess.Start(WindowsBuild.DotnetHost, [Beside("pmpi.dll"), "run", "--master", linuxAgent, "--insecure", "--heartbeat-timeout", "30", file]);
        int code = await run.WaitForExitAsync(Timeout);
        await using var nodes = ChildProcess.Start(WindowsBuild.DotnetHost, [Beside("pmpi.dll"), "nodes", "--insecure", linuxAgent, windowsAddress]);
        int nodesCode = await nodes.WaitForExitAsync(Timeout);

        // Assert: shared memory within each node, the network between them; every rank's checks passed, and each
        // node ran its own build (a Windows rank process is a Wine process here).
        Assert.True(routesCode == 0, routes.Transcript);
        Assert.Contains("0 (linux) -> 1 (linux): shared memory", routes.Stdout);
        Assert.Contains("2 (windows) -> 3 (windows): shared memory", routes.Stdout);
        Assert.Contains("1 (linux) -> 2 (windows): direct", routes.Stdout);
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}\n--- Linux agent ---\n{linux.Transcript}\n--- Windows agent ---\n{windowsAgent.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        Assert.Equal(4, run.Stdout.Count(line => line.Contains(" hello rank=", StringComparison.Ordinal)));
        // Each agent describes its own system: the Windows one through the Windows calls of its node information.
        Assert.True(nodesCode == 0, nodes.Transcript);
        Assert.Contains(nodes.Stdout, line => line.Contains("Microsoft Windows", StringComparison.Ordinal));
        Assert.Contains(nodes.Stdout, line => line.Contains(File.ReadLines("/etc/os-release").First(l => l.StartsWith("PRETTY_NAME=", StringComparison.Ordinal))["PRETTY_NAME=".Length..].Trim('"'), StringComparison.Ordinal));
    }

    /// <summary>host:port from the agent's "pmpi agent listening on http://host:port/" line.</summary>
    private static async Task<string> ListeningAddress(ChildProcess agent)
    {
        var line = await agent.WaitForLineAsync(l => l.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), Timeout, "its listening line");
        return ListeningLine().Match(line).Groups[1].Value;
    }

    [GeneratedRegex(@"http://([^/]+)/")]
    private static partial Regex ListeningLine();

    private static string Beside(string name) => Path.Combine(AppContext.BaseDirectory, name);
}
