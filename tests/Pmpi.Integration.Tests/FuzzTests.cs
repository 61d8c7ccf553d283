using Google.Protobuf;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Randomized mutation of everything a peer can send an agent, a master and a rank endpoint: protobuf messages, gRPC
/// framing, HTTP/2 frames and header blocks, computation files. A fixed seed set runs here (FuzzSettings); a long run
/// is bench/fuzz.sh. The endpoint must never die, and must still serve a legitimate caller afterwards.
/// </summary>
public sealed class FuzzTests
{
    private const string MissingProgram = "/nonexistent/pmpi-fuzz-rank.dll";

    private static readonly string ComputationXml =
        $"""<computation name="fuzz" timeout="00:01:00" xmlns="urn:pmpi:computation:v1"><env name="A" value="1"/><ranks program="{MissingProgram}" count="2" args="a b"/></computation>""";

    [Fact]
    public async Task AgentAndMaster_MutatedCalls_NeverCrashAndStillServe()
    {
        // Arrange
        await using var agent = await AgentProcess.StartAsync("fuzzed", slots: 1);
        var launch = new LaunchRequest { JobId = "fuzz-job", WorldSize = 1, MasterAddress = "http://127.0.0.1:1", Ticket = ByteString.CopyFromUtf8("fuzz-ticket") };
        launch.Ranks.Add(new RankLaunch { Rank = 0, Program = MissingProgram, Arguments = { "x" }, WorkingDirectory = Path.GetTempPath(), Environment = { ["A"] = "1" } });
        FuzzSeed[] seeds =
        [
            new(ServicePaths.GetNodeInfo, new NodeInfoRequest()),
            new(ServicePaths.Launch, launch),
            new(ServicePaths.Kill, new KillRequest { JobId = "fuzz-job", JobToken = "fuzz-token" }),
            new(ServicePaths.Submit, new SubmitRequest { FileName = "/tmp/fuzz.xml", ComputationXml = ComputationXml }),
            new(ServicePaths.Register, new RegisterRequest { JobId = "fuzz-job", JobToken = "fuzz-token", Rank = 0, Endpoint = "http://127.0.0.1:1" }),
            new(ServicePaths.Abort, new AbortRequest { JobId = "fuzz-job", JobToken = "fuzz-token", Rank = 0, ErrorCode = 3, Reason = "fuzz" }),
            new("/pmpi.v1.Agent/NoSuchMethod", new NodeInfoRequest()),
        ];

        // Act
        int answered = 0;
        foreach (int seed in FuzzSettings.Seeds)
        {
            answered += await EndpointFuzzer.RunAsync(agent.Address, seed, FuzzSettings.Iterations, seeds,
                mutator => new SubmitRequest { FileName = "/tmp/fuzz.xml", ComputationXml = mutator.Mutate(ComputationXml) }, tls: TestCluster.ClientTls());
            Assert.False(agent.Process.HasExited, $"The agent died during seed {seed}.\n{agent.Process.Transcript}");
        }

        // Assert: alive, and a real job still runs through it.
        Assert.True(answered > 0, "No mutated call was answered: the fuzzer did not reach the agent.");
        var node = await PmpiCli.GetNodeInfoAsync(agent.Address);
        Assert.Equal(1, node.Slots);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("after-fuzz.xml", Computation.Of("after-fuzz", 1, ["collectives"], ("a", agent.Endpoint, 1)));
        await using var run = PmpiCli.Start(["run", "--master", agent.Endpoint, file]);
        Assert.True(await run.WaitForExitAsync(PmpiCli.Timeout) == 0, $"A job failed on the fuzzed agent.\n{run.Transcript}\n{agent.Process.Transcript}");
        Assert.Contains("[0] allreduce=1 gather=1", run.Stdout);
    }

    [LinuxFact]
    public async Task RankEndpoint_MutatedCalls_NeverCrashesAndTheJobCompletes()
    {
        // Arrange: two ranks that registered and wait for a file; rank 0's endpoint is the target (over the network:
        // ranks of one node that share memory open no endpoint).
        using var scratch = new ScratchDirectory();
        var trigger = Path.Combine(scratch.Path, "go");
        await using var run = PmpiCli.Start(["run", "--links", "network", "-n", "2", PmpiCli.TestRanksDll, "await", trigger]);
        var hellos = new List<RankHello>();
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] waiting", PmpiCli.Timeout, $"rank {rank} waiting");
            hellos = RankHello.All(run.Stdout);
            int port = ListeningPorts.Of(hellos.Single(h => h.Rank == 0).ProcessId).Single();
            var endpoint = new Uri($"http://127.0.0.1:{port}");
            var data = new Frame { Data = new Data { Context = 0, Source = 1, Tag = 7, TotalLength = 4, Payload = ByteString.CopyFrom(1, 2, 3, 4) } };
            FuzzSeed[] seeds =
            [
                new(ServicePaths.Connect, new Frame { Hello = new Hello { JobId = hellos[0].JobId, JobToken = "not-the-token", SourceWorldRank = 1 } }),
                new(ServicePaths.Connect, data),
                new(ServicePaths.Connect, new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(5, 6) } }),
                new(ServicePaths.Connect, new Frame()),
            ];

            // Act
            int answered = 0;
            foreach (int seed in FuzzSettings.Seeds)
            {
                answered += await EndpointFuzzer.RunAsync(endpoint, seed, FuzzSettings.Iterations, seeds);
                Assert.False(run.HasExited, $"The job ended during seed {seed}.\n{run.Transcript}");
            }
            File.WriteAllText(trigger, "go");
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(answered > 0, "No mutated call was answered: the fuzzer did not reach the rank.");
            Assert.True(code == 0, $"The job failed after its rank endpoint was fuzzed.\n{run.Transcript}");
            Assert.Contains("[0] allreduce=3 gather=1,2", run.Stdout);
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
