using System.Globalization;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Security;
using static Pmpi.Integration.Tests.Infrastructure.FirewalledDomains;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Two domains in network namespaces whose direct traffic a firewall drops (<see cref="FirewalledDomains"/>), each
/// with a real `pmpi agent` and `pmpi gateway`, and a master outside both: jobs spanning the domains complete only
/// through the gateways, and fail fast when one is gone.
/// </summary>
public sealed partial class FirewalledDomainsTests
{
    private static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(3);

    [NetworkNamespaceFact]
    public async Task Run_JobsAcrossTheFirewall_CompleteThroughTheGatewaysAndFailFastWithoutOne()
    {
        // Arrange: a credential whose certificates name every address of the network, the daemons in their namespaces.
        using var scratch = new ScratchDirectory();
        var credentials = ClusterCredentials.Initialize(Path.Combine(scratch.Path, "cluster"), [AgentA, AgentB, GatewayA, GatewayB, Master]).Directory;
        await using var network = await FirewalledDomains.CreateAsync(credentials);
        await network.StartAgentAsync(network.Control, "0.0.0.0", domain: null, slots: 1);
        await network.StartAgentAsync(network.A, AgentA, "campus-a", slots: 3);
        await network.StartAgentAsync(network.B, AgentB, "campus-b", slots: 3);
        await network.StartGatewayAsync(network.A, "campus-a");
        var gatewayB = await network.StartGatewayAsync(network.B, "campus-b");
        // The firewall holds: from campus-a, b's agent is out of reach and only b's gateway port answers.
        Assert.False(await CanConnectAsync(network.A, AgentB, AgentPort), "campus-a reached campus-b's agent directly.");
        Assert.True(await CanConnectAsync(network.A, GatewayB, GatewayPort), "campus-a cannot reach campus-b's gateway.");

        // Act 1: a ring, Ssends both ways, a 4 MB message and collectives, two ranks per domain.
        var domains = WriteDomainsJob(scratch);
        var ring = await network.RunAsync(network.Control, RunTimeout, "run", "--master", $"https://127.0.0.1:{AgentPort}", domains);

        // Assert 1: verified results, and both gateways carried the traffic (the 4 MB message went a -> b).
        Assert.True(ring.ExitCode == 0, $"pmpi run exited with {ring.ExitCode}.\n{ring.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", ring.Stdout);
        var counters = await CountersAsync(network);
        Assert.All(counters.Values, c => Assert.True(c.StreamsRelayed > 0 && c.BytesRelayed > 4 << 20, $"a gateway relayed {c.StreamsRelayed} streams, {c.BytesRelayed} bytes"));

        // Act 2: examples/jobs/two-domains.xml as documented, and Assert 2: its product.
        await RunTwoDomainsMatMulAsync(network, scratch, network.Control, $"https://127.0.0.1:{AgentPort}");
        var after = await CountersAsync(network);
        Assert.All(after, pair => Assert.True(pair.Value.StreamsRelayed > counters[pair.Key].StreamsRelayed, $"{pair.Key} relayed no stream of the matrix multiply"));

        // Act and Assert 2b: rank 3 (campus-b) spawns a child on b1, which talks to the parents of campus-a too: only
        // through the gateways, which learn the new world before it starts.
        var spawn = scratch.Write("spawn.xml", File.ReadAllText(domains).Replace("<arg>domains</arg>", "<arg>spawn</arg><arg>1</arg>", StringComparison.Ordinal));
        var spawning = network.Pmpi(network.Control, "run", "--master", $"https://127.0.0.1:{AgentPort}", spawn);
        int spawnCode = await spawning.WaitForExitAsync(RunTimeout);
        var spawned = RankHello.All(spawning.Stdout);
        try
        {
            await SpawnTests.AssertSpawnedAsync(spawning, spawnCode, spawned, parents: 4, children: 1);
        }
        finally
        {
            if (spawned.Count > 0) RankProcesses.Kill(spawned[0].JobId, spawned.Select(hello => hello.ProcessId));
        }

        // Act 3: every rank meets the others once (through the gateways) and waits; campus-b's gateway stops; they go on.
        var go = Path.Combine(scratch.Path, "go");
        var waiting = scratch.Write("waiting.xml", File.ReadAllText(domains).Replace("<arg>domains</arg>", $"<arg>await</arg><arg>{go}</arg>", StringComparison.Ordinal));
        var cut = network.Pmpi(network.Control, "run", "--master", $"https://127.0.0.1:{AgentPort}", waiting);
        for (int rank = 0; rank < 4; rank++)
            await cut.WaitForLineAsync(line => line == $"[{rank}] waiting", RunTimeout, $"rank {rank} waiting");
        await gatewayB.DisposeAsync();
        File.WriteAllText(go, "");
        int cutCode = await cut.WaitForExitAsync(RunTimeout);

        // Assert 3: the job fails, a rank naming both ranks, their domains and the gateways between them.
        Assert.True(cutCode == 1, $"pmpi run exited with {cutCode}.\n{cut.Transcript}");
        // Whichever rank notices first speaks, on the call it served or the one it dialed: from campus-a or from
        // campus-b, its own side first.
        string gateways = $"(https://{GatewayA}:{GatewayPort} -> https://{GatewayB}:{GatewayPort}|https://{GatewayB}:{GatewayPort} -> https://{GatewayA}:{GatewayPort})";
        Assert.True(Regex.IsMatch(cut.Transcript, $@"rank \d \(domain '(?<own>campus-[ab])'\) and rank \d \(domain '(?!\k<own>)campus-[ab]'\), via gateways {gateways}"), cut.Transcript);

        // Act and Assert 4: the same job again, with campus-b's gateway gone, fails at once naming it.
        await RunWithoutGatewayBAsync(network, network.Control, $"https://127.0.0.1:{AgentPort}", domains);
    }

    [NetworkNamespaceFact]
    public async Task Run_MasterInOneDomain_ReachesTheOthersAgentsAndRanksOnlyThroughTheGateways()
    {
        // Arrange: campus-a's agent is the master; nothing but the gateway port crosses between the campuses.
        using var scratch = new ScratchDirectory();
        var credentials = ClusterCredentials.Initialize(Path.Combine(scratch.Path, "cluster"), [AgentA, AgentB, GatewayA, GatewayB]).Directory;
        await using var network = await FirewalledDomains.CreateAsync(credentials);
        await network.StartAgentAsync(network.A, AgentA, "campus-a", slots: 3);
        await network.StartAgentAsync(network.B, AgentB, "campus-b", slots: 3);
        await network.StartGatewayAsync(network.A, "campus-a");
        var gatewayB = await network.StartGatewayAsync(network.B, "campus-b");
        Assert.False(await CanConnectAsync(network.A, AgentB, AgentPort), "The master's campus reached campus-b's agent directly.");
        Assert.False(await CanConnectAsync(network.B, AgentA, AgentPort), "campus-b reached the master directly.");
        var domains = WriteDomainsJob(scratch);
        string master = $"https://{AgentA}:{AgentPort}";

        // Act 1: the ring, Ssend, 4 MB and collectives job, submitted to campus-a's agent.
        var run = await network.RunAsync(network.A, RunTimeout, "run", "--master", master, domains);

        // Assert 1: it completes with verified results; each gateway relayed control calls (the launch and kill of
        // b1's ranks, the job's registration with campus-b's gateway, campus-b's ranks registering) and the streams.
        Assert.True(run.ExitCode == 0, $"pmpi run exited with {run.ExitCode}.\n{run.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        Assert.Contains(run.Stdout, line => line.Contains("hello rank=3 ", StringComparison.Ordinal));
        var status = await network.RunAsync(network.A, PmpiCli.Timeout, "gateway", "status", $"{GatewayA}:{GatewayPort}", $"{GatewayB}:{GatewayPort}");
        Assert.True(status.ExitCode == 0, $"pmpi gateway status exited with {status.ExitCode}.\n{status.Transcript}");
        foreach (var domain in new[] { "campus-a", "campus-b" })
        {
            var line = status.Stdout.Single(line => line.Contains($"domain={domain} ", StringComparison.Ordinal));
            var calls = long.Parse(ControlCalls().Match(line).Groups["calls"].Value, CultureInfo.InvariantCulture);
            // At least: b1's launch; campus-b's registration twice (relayed by campus-a's gateway); two ranks' Register.
            Assert.True(calls >= 3, $"{domain}'s gateway relayed {calls} control calls: {line}");
        }

        // Act and Assert 2: the same job with campus-b's gateway gone fails at once, naming it and the hop campus-a's
        // gateway could not make.
        await gatewayB.DisposeAsync();
        var transcript = await RunWithoutGatewayBAsync(network, network.A, master, domains);
        Assert.Contains("could not relay job domains-", transcript);
    }

    /// <summary>
    /// Runs <paramref name="job"/> from <paramref name="ns"/> while campus-b's gateway is gone: it must fail within 30 s
    /// with code 1, naming that gateway, before any rank ran. Returns the transcript.
    /// </summary>
    private static async Task<string> RunWithoutGatewayBAsync(FirewalledDomains network, string ns, string master, string job)
    {
        var started = DateTime.UtcNow;
        var failed = await network.RunAsync(ns, RunTimeout, "run", "--master", master, job);
        Assert.True(failed.ExitCode == 1, $"pmpi run exited with {failed.ExitCode}.\n{failed.Transcript}");
        Assert.Contains($"the gateway of domain 'campus-b' at https://{GatewayB}:{GatewayPort} did not register the job", failed.Transcript);
        Assert.DoesNotContain(failed.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(30), $"The failure took {DateTime.UtcNow - started}.");
        return failed.Transcript;
    }

    [NetworkNamespaceFact]
    public async Task Run_DomainWhoseGatewayOnlyDialsOut_JoinsThroughTheConnectionItOpened()
    {
        // Arrange: as above with the master in campus-a, but nothing can connect to campus-b's gateway (NAT): it dials
        // campus-a's and parks a call there.
        using var scratch = new ScratchDirectory();
        var credentials = ClusterCredentials.Initialize(Path.Combine(scratch.Path, "cluster"), [AgentA, AgentB, GatewayA, GatewayB]).Directory;
        await using var network = await FirewalledDomains.CreateAsync(credentials, bAcceptsNothing: true);
        await network.StartAgentAsync(network.A, AgentA, "campus-a", slots: 3);
        await network.StartAgentAsync(network.B, AgentB, "campus-b", slots: 3);
        await network.StartGatewayAsync(network.A, "campus-a");
        await network.StartGatewayAsync(network.B, "campus-b", "--dial-out", $"{GatewayA}:{GatewayPort}");
        Assert.False(await CanConnectAsync(network.A, GatewayB, GatewayPort), "campus-a connected to campus-b's gateway.");
        Assert.True(await CanConnectAsync(network.B, GatewayA, GatewayPort), "campus-b cannot reach campus-a's gateway.");
        var parked = DateTime.UtcNow + RunTimeout;
        while (!Regex.IsMatch(await StatusAsync(network, network.A, GatewayA), @" tunnels_open=[1-9]"))
            Assert.True(DateTime.UtcNow < parked, "campus-b's gateway parked no call at campus-a's.");
        string master = $"https://{AgentA}:{AgentPort}";

        // Act: the ring, Ssend, 4 MB and collectives job, then two-domains.xml's matrix multiply.
        var run = await network.RunAsync(network.A, RunTimeout, "run", "--master", master, WriteDomainsJob(scratch));
        Assert.True(run.ExitCode == 0, $"pmpi run exited with {run.ExitCode}.\n{run.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        await RunTwoDomainsMatMulAsync(network, scratch, network.A, master);

        // Assert: campus-b's gateway relayed the streams and the control calls that came to it inside the tunnel.
        var b = await StatusAsync(network, network.B, GatewayB);
        var counters = StatusLine().Match(b);
        Assert.True(long.Parse(counters.Groups["streams"].Value, CultureInfo.InvariantCulture) > 0 && long.Parse(counters.Groups["bytes"].Value, CultureInfo.InvariantCulture) > 4 << 20, b);
        Assert.True(long.Parse(ControlCalls().Match(b).Groups["calls"].Value, CultureInfo.InvariantCulture) >= 3, b);
    }

    /// <summary>`pmpi gateway status` of the gateway at <paramref name="address"/>, run in <paramref name="ns"/>: its one line.</summary>
    private static async Task<string> StatusAsync(FirewalledDomains network, string ns, string address)
    {
        var status = await network.RunAsync(ns, PmpiCli.Timeout, "gateway", "status", $"{address}:{GatewayPort}");
        Assert.True(status.ExitCode == 0, $"pmpi gateway status exited with {status.ExitCode}.\n{status.Transcript}");
        return status.Stdout.Single(line => line.Contains(" domain=", StringComparison.Ordinal));
    }

    /// <summary>
    /// A computation of 4 TestRanks, two per campus, running the 'domains' scenario: a ring of plain sends, Ssends both
    /// ways, a 4 MB message and collectives, which prints "[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4".
    /// </summary>
    private static string WriteDomainsJob(ScratchDirectory scratch) => scratch.Write("domains.xml", $"""
        <computation name="domains" timeout="00:02:00" xmlns="urn:pmpi:computation:v1">
          <domain name="campus-a" gateway="{GatewayA}:{GatewayPort}"/>
          <domain name="campus-b" gateway="{GatewayB}:{GatewayPort}"/>
          <node name="a1" agent="{AgentA}:{AgentPort}" domain="campus-a" slots="2"/>
          <node name="b1" agent="{AgentB}:{AgentPort}" domain="campus-b" slots="2"/>
          <ranks program="{PmpiCli.TestRanksDll}" count="4"><arg>domains</arg></ranks>
        </computation>
        """);

    /// <summary>
    /// Runs examples/jobs/two-domains.xml as documented, its programs pointed at the (Debug) builds next to this test
    /// and the master's matrices cut to a fifth per side, and checks the product the master printed against the one
    /// computed here, with 4 workers in VB and F#.
    /// </summary>
    private static async Task RunTwoDomainsMatMulAsync(FirewalledDomains network, ScratchDirectory scratch, string ns, string master)
    {
        var twoDomains = XDocument.Load(Path.Combine(AppContext.BaseDirectory, "jobs", "two-domains.xml"));
        var groups = twoDomains.Descendants(XName.Get("ranks", "urn:pmpi:computation:v1")).ToList();
        foreach (var ranks in groups)
            ranks.SetAttributeValue("program", Path.Combine(AppContext.BaseDirectory, Path.GetFileName(ranks.Attribute("program")!.Value)));
        groups[0].SetAttributeValue("args", "480 240 100");
        var matmul = await network.RunAsync(ns, RunTimeout, "run", "--master", master, scratch.Write("two-domains.xml", twoDomains.ToString()));

        Assert.True(matmul.ExitCode == 0, $"pmpi run exited with {matmul.ExitCode}.\n{matmul.Transcript}");
        var summary = matmul.Stdout.Select(line => MatMulTests.Summary().Match(line)).SingleOrDefault(m => m.Success);
        Assert.True(summary is not null, $"No result line in the output.\n{matmul.Transcript}");
        Assert.Equal(4, int.Parse(summary.Groups["workers"].Value, CultureInfo.InvariantCulture));
        double expected = MatMulTests.Product(480, 240, 100).Sum();
        double sum = double.Parse(summary.Groups["sum"].Value, CultureInfo.InvariantCulture);
        Assert.True(Math.Abs(sum - expected) <= 1e-6 * Math.Max(1, Math.Abs(expected)), $"The sum of C is {sum}; computed here: {expected}.");
    }

    /// <summary>Whether a TCP connection from namespace <paramref name="ns"/> to the address opens within 3 s.</summary>
    private static async Task<bool> CanConnectAsync(string ns, string address, int port)
    {
        var (code, _) = await ChildProcess.RunAsync("ip", ["netns", "exec", ns, "timeout", "3", "bash", "-c", $"exec 3<>/dev/tcp/{address}/{port}"], TimeSpan.FromSeconds(30));
        return code == 0;
    }

    /// <summary>Both gateways' counters, read with `pmpi gateway status` from campus-a (which reaches both).</summary>
    private static async Task<Dictionary<string, (long StreamsRelayed, long BytesRelayed)>> CountersAsync(FirewalledDomains network)
    {
        var status = await network.RunAsync(network.A, PmpiCli.Timeout, "gateway", "status", $"{GatewayA}:{GatewayPort}", $"{GatewayB}:{GatewayPort}");
        Assert.True(status.ExitCode == 0, $"pmpi gateway status exited with {status.ExitCode}.\n{status.Transcript}");
        var counters = status.Stdout.Select(line => StatusLine().Match(line)).Where(m => m.Success).ToDictionary(
            m => m.Groups["domain"].Value,
            m => (long.Parse(m.Groups["streams"].Value, CultureInfo.InvariantCulture), long.Parse(m.Groups["bytes"].Value, CultureInfo.InvariantCulture)));
        Assert.Equal(["campus-a", "campus-b"], counters.Keys.Order());
        return counters;
    }

    [GeneratedRegex(@"domain=(?<domain>\S+) jobs=\d+ streams_open=\d+ streams_relayed=(?<streams>\d+) bytes_relayed=(?<bytes>\d+)")]
    private static partial Regex StatusLine();

    [GeneratedRegex(@"control_calls_relayed=(?<calls>\d+)")]
    private static partial Regex ControlCalls();
}
