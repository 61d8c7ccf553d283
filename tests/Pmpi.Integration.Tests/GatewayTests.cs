using Google.Protobuf;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A job across two domains, each with its own `pmpi agent` and `pmpi gateway` process on loopback: ranks of different
/// domains reach each other only through the two gateways (their routes say so), which the gateways' counters show.
/// The network-namespace test (FirewalledDomainsTests) adds the firewall that makes it the only way.
/// </summary>
public sealed class GatewayTests
{
    [Fact]
    public async Task Run_JobAcrossTwoDomains_CompletesThroughBothGatewaysWithVerifiedResults()
    {
        // Arrange
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 2, domain: "b");
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("two-domains.xml", TwoDomains(gatewayA.Endpoint, gatewayB.Endpoint, agentA.Endpoint, agentB.Endpoint, "domains"));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        var a = await gatewayA.StatusAsync();
        var b = await gatewayB.StatusAsync();
        Assert.True(a.StreamsRelayed > 0 && b.StreamsRelayed > 0, $"streams relayed: a {a.StreamsRelayed}, b {b.StreamsRelayed}");
        // The 4 MB message from rank 0 (domain a) to rank 3 (domain b) crossed both.
        Assert.True(a.BytesRelayed > 4 << 20 && b.BytesRelayed > 4 << 20, $"bytes relayed: a {a.BytesRelayed}, b {b.BytesRelayed}");
        Assert.Equal((0, 0), (a.Jobs, b.Jobs));
        Assert.Equal((0, 0), (a.StreamsRefused, b.StreamsRefused));
    }

    [Fact]
    public async Task Spawn_RootInOneDomain_ChildrenTalkToParentsOfBothDomainsThroughTheGateways()
    {
        // Arrange: ranks 0-1 on a1 (domain a), 2-3 on b1 (domain b); the root (3) spawns 3 children on b1, whose agent
        // has room for them. The gateways learn the new world before its ranks register through b's.
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 5, domain: "b");
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("spawn.xml", TwoDomains(gatewayA.Endpoint, gatewayB.Endpoint, agentA.Endpoint, agentB.Endpoint, "spawn", "3"));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: each child sent to its parent (children 0 and 1 to ranks 0 and 1, in domain a) and took part in
        // collectives of all seven; their domains do not reach each other, so only the gateways carried that, and
        // neither refused a stream (as they would one for ranks they did not know).
        var hellos = RankHello.All(run.Stdout);
        try
        {
            await SpawnTests.AssertSpawnedAsync(run, code, hellos, parents: 4, children: 3);
            Assert.Equal(["node-a", "node-a", "node-b", "node-b", "node-b", "node-b", "node-b"], hellos.OrderBy(hello => hello.Tag).Select(hello => hello.Agent));
            var a = await gatewayA.StatusAsync();
            var b = await gatewayB.StatusAsync();
            Assert.True(a.StreamsRelayed > 0 && b.StreamsRelayed > 0, $"streams relayed: a {a.StreamsRelayed}, b {b.StreamsRelayed}");
            Assert.Equal((0L, 0L), (a.StreamsRefused, b.StreamsRefused));
            Assert.Equal((0, 0), (a.Jobs, b.Jobs));
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(hello => hello.ProcessId));
        }
    }

    [Fact]
    public async Task Run_AllreduceAcrossTwoDomains_OnlyTheDomainLeadersCrossTheGateways()
    {
        // Arrange: ranks 0-3 on node a1 in domain a, 4-7 on b1 in domain b; an Allreduce of 1 MB of doubles, once by
        // the predefined sum and once by a user's operation. Both go by node and domain: the sum may be regrouped,
        // and these levels keep rank order, which any operation allows (flat recursive doubling would pair every rank
        // of a with one of b in its last round, four streams and 8 MB).
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 4, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 4, domain: "b");
        using var scratch = new ScratchDirectory();

        // Act
        var predefined = await RelayedByAsync("predefined");
        var users = await RelayedByAsync("user");

        // Assert: each by levels, one pair (leader 0 with leader 4: one call, or two when both dial at once) carrying
        // the array once each way.
        foreach (var (streams, bytes) in new[] { predefined, users })
        {
            Assert.True(streams is 1 or 2, $"predefined: {predefined}, user's: {users} (streams, bytes)");
            Assert.InRange(bytes, 2L << 20, 3L << 20);
        }

        async Task<(long Streams, long Bytes)> RelayedByAsync(string operation)
        {
            var before = await gatewayA.StatusAsync();
            var file = scratch.Write($"allreduce-{operation}.xml", $"""
                <computation name="allreduce" timeout="00:02:00" xmlns="urn:pmpi:computation:v1">
                  <domain name="a" gateway="{gatewayA.Endpoint}"/>
                  <domain name="b" gateway="{gatewayB.Endpoint}"/>
                  <node name="a1" agent="{agentA.Endpoint}" domain="a" slots="4"/>
                  <node name="b1" agent="{agentB.Endpoint}" domain="b" slots="4"/>
                  <ranks program="{PmpiCli.TestRanksDll}" count="8"><arg>allreduce</arg><arg>1</arg><arg>{operation}</arg></ranks>
                </computation>
                """);
            await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Contains("[0] allreduce ok 131072 doubles", run.Stdout);
            var after = await gatewayA.StatusAsync();
            return (after.StreamsRelayed - before.StreamsRelayed, after.BytesRelayed - before.BytesRelayed);
        }
    }

    [Fact]
    public async Task Run_256MegabyteMessageAcrossDomains_ArrivesIntactThroughBothGateways()
    {
        // Arrange: rank 0 alone in domain a, rank 1 alone in domain b.
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 1, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 1, domain: "b");
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("big.xml", $"""
            <computation name="big" timeout="00:03:00" xmlns="urn:pmpi:computation:v1">
              <domain name="a" gateway="{gatewayA.Endpoint}"/>
              <domain name="b" gateway="{gatewayB.Endpoint}"/>
              <node name="a1" agent="{agentA.Endpoint}" domain="a" slots="1"/>
              <node name="b1" agent="{agentB.Endpoint}" domain="b" slots="1"/>
              <ranks program="{PmpiCli.TestRanksDll}" count="2"><arg>big</arg><arg>256</arg></ranks>
            </computation>
            """);

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(TimeSpan.FromMinutes(4));

        // Assert: every double in place, and every byte of it crossed both gateways.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains($"[1] big ok {256 * 1024 * 1024 / sizeof(double)} doubles", run.Stdout);
        foreach (var gateway in new[] { gatewayA, gatewayB })
        {
            var status = await gateway.StatusAsync();
            Assert.True(status.BytesRelayed > 256L << 20, $"{gateway.Endpoint} relayed {status.BytesRelayed} bytes");
        }
    }

    [Fact]
    public async Task Run_PeerDomainsGatewayDown_FailsAtOnceNamingTheDomainAndTheGateway()
    {
        // Arrange: b's gateway was started and is gone.
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        var gatewayB = await GatewayProcess.StartAsync("b");
        await gatewayB.DisposeAsync();
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 2, domain: "b");
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("two-domains.xml", TwoDomains(gatewayA.Endpoint, gatewayB.Endpoint, agentA.Endpoint, agentB.Endpoint, "domains"));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 1, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains($"the gateway of domain 'b' at https://{gatewayB.Endpoint} did not register the job", run.Transcript);
        Assert.DoesNotContain(run.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Run_GatewayStoppedMidJob_FailsFastNamingTheDomainsAndHop()
    {
        // Arrange: every rank registers, meets the others once (through the gateways), then waits for a file.
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 2, domain: "b");
        using var scratch = new ScratchDirectory();
        var go = Path.Combine(scratch.Path, "go");
        var file = scratch.Write("two-domains.xml", TwoDomains(gatewayA.Endpoint, gatewayB.Endpoint, agentA.Endpoint, agentB.Endpoint, "await", go));
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        await run.WaitForLineAsync(line => line.EndsWith("] waiting", StringComparison.Ordinal), PmpiCli.Timeout, "a waiting rank");

        // Act
        await gatewayB.DisposeAsync();
        File.WriteAllText(go, "");
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: whoever notices first names both ends, their domains and the gateways between them. A rank speaks
        // on the call it served or the one it dialed, from domain a or from domain b, its own side first; the master
        // (in domain a) on its launch call to b's agent, relayed by both gateways.
        Assert.True(code == 1, $"pmpi run exited with {code}.\n{run.Transcript}");
        string gateways = $"(https://{gatewayA.Endpoint} -> https://{gatewayB.Endpoint}|https://{gatewayB.Endpoint} -> https://{gatewayA.Endpoint})";
        string ranks = $@"rank \d \(domain '(?<own>[ab])'\) and rank \d \(domain '(?!\k<own>)[ab]'\), via gateways {gateways}";
        string agent = $@"the agent of node 'b1' at {agentB.Endpoint} \(domain 'b', via gateways https://{gatewayA.Endpoint} -> https://{gatewayB.Endpoint}\) failed";
        Assert.Matches($"{ranks}|{agent}", run.Transcript);
    }

    [Fact]
    public async Task Gateway_MutatedCalls_NeverCrashesAndStillRelaysAJob()
    {
        // Arrange
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        var table = new RankTable { Ranks = { new RankEntry { Rank = 0, Domain = "a", Gateway = gatewayA.Address.ToString(), Endpoint = "http://127.0.0.1:1" } } };
        FuzzSeed[] seeds =
        [
            new(ServicePaths.RegisterJob, new RegisterJobRequest { Ticket = ByteString.CopyFromUtf8("fuzz-ticket"), TicketSignature = ByteString.CopyFrom(new byte[32]), Table = table }),
            new(ServicePaths.RemoveJob, new RemoveJobRequest { JobId = "fuzz-job" }),
            new(ServicePaths.GatewayStatus, new GetStatusRequest()),
            new(ServicePaths.Connect, new Frame { Hello = new Hello { JobId = "fuzz-job", JobToken = "fuzz-token", SourceWorldRank = 0, DestinationWorldRank = 1 } }),
            new("/pmpi.v1.Gateway/NoSuchMethod", new GetStatusRequest()),
        ];

        // Act: as a cluster member, so the mutations reach the methods behind the TLS handshake.
        int answered = 0;
        foreach (int seed in FuzzSettings.Seeds)
        {
            answered += await EndpointFuzzer.RunAsync(gatewayA.Address, seed, FuzzSettings.Iterations, seeds, tls: TestCluster.ClientTls());
            Assert.False(gatewayA.Process.HasExited, $"The gateway died during seed {seed}.\n{gatewayA.Process.Transcript}");
        }

        // Assert: alive, and a job across two domains still runs through it.
        Assert.True(answered > 0, "No mutated call was answered: the fuzzer did not reach the gateway.");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a");
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 2, domain: "b");
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("after-fuzz.xml", TwoDomains(gatewayA.Endpoint, gatewayB.Endpoint, agentA.Endpoint, agentB.Endpoint, "domains"));
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        Assert.True(await run.WaitForExitAsync(PmpiCli.Timeout) == 0, $"A job failed through the fuzzed gateway.\n{run.Transcript}\n{gatewayA.Process.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        Assert.True((await gatewayA.StatusAsync()).StreamsRefused > 0, "The fuzzed gateway refused no stream.");
    }

    [Fact]
    public async Task Gateway_WithoutCredential_RefusesToStartUnlessInsecureWhichWarns()
    {
        // Act
        var pmpi = PmpiCli.Command;
        var (refused, refusal) = await ChildProcess.RunAsync(pmpi[0], [.. pmpi.Skip(1), "gateway", "--domain", "a", "--port", "0"], PmpiCli.Timeout,
            PmpiCli.WithCredential(new Dictionary<string, string?> { [Rpc.Security.ClusterCredentials.EnvironmentVariable] = null }));
        await using var insecure = PmpiCli.Start(["gateway", "--domain", "a", "--bind", "127.0.0.1", "--port", "0", "--insecure"],
            new Dictionary<string, string?> { [Rpc.Security.ClusterCredentials.EnvironmentVariable] = null });
        var listening = await insecure.WaitForLineAsync(line => line.StartsWith("pmpi gateway listening on http://127.0.0.1:", StringComparison.Ordinal), PmpiCli.Timeout, "its listening line");

        // Assert
        Assert.True(refused == 2, $"pmpi gateway without a credential exited with {refused}.\n{refusal}");
        Assert.Contains("no cluster credential", refusal);
        Assert.Contains(insecure.Stderr, line => line.Contains("WARNING: --insecure", StringComparison.Ordinal));
        Assert.Contains("(domain a)", listening);
    }

    /// <summary>Four test ranks running <paramref name="scenario"/>: ranks 0-1 on node a1 of domain a, ranks 2-3 on b1 of domain b.</summary>
    private static string TwoDomains(string gatewayA, string gatewayB, string agentA, string agentB, params string[] scenario) => $"""
        <computation name="gateways" timeout="00:02:00" xmlns="urn:pmpi:computation:v1">
          <domain name="a" gateway="{gatewayA}"/>
          <domain name="b" gateway="{gatewayB}"/>
          <node name="a1" agent="{agentA}" domain="a" slots="2"/>
          <node name="b1" agent="{agentB}" domain="b" slots="2"/>
          <ranks program="{PmpiCli.TestRanksDll}" count="4">
            {string.Concat(scenario.Select(argument => $"<arg>{argument}</arg>"))}
          </ranks>
        </computation>
        """;
}
