using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Runtime.InteropServices;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Hosting;
using Pmpi.Agent.Node;
using Pmpi.Agent.NodeInfo;
using Pmpi.Agent.Tests.NodeInfo;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;
using JobControlClient = Pmpi.Rpc.V1.JobControl.JobControlClient;
using MasterClient = Pmpi.Rpc.V1.Master.MasterClient;

namespace Pmpi.Agent.Tests.Hosting;

public class AgentHostTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>The secret every host and channel of these tests signs its requests with (h2c on loopback).</summary>
    private static readonly RpcSecurity Security = RpcSecurity.ForThisProcess();

    private static Task<AgentHost> StartOnFreePortAsync(Action<AgentOptions>? configure = null) =>
        AgentHost.StartAsync(options =>
        {
            options.Port = 0;
            options.Security = Security;
            configure?.Invoke(options);
        }).WaitAsync(Timeout);

    private static GrpcChannel ChannelTo(AgentHost host) => RpcChannels.For(host.Address, Security);

    [Fact]
    public async Task StartAsync_PortZero_AnswersGetNodeInfoOnTheBoundPort()
    {
        // Arrange
        await using var host = await StartOnFreePortAsync(options =>
        {
            options.Domain = "campus-a";
            options.Slots = 3;
        });
        using var channel = ChannelTo(host);

        // Act
        var info = await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);

        // Assert
        Assert.NotEqual(0, host.Address.Port);
        Assert.Equal(IPAddress.Loopback.ToString(), host.Address.Host);
        Assert.Equal("campus-a", info.Domain);
        Assert.Equal(3, info.Slots);
        Assert.Equal(System.Environment.ProcessorCount, info.LogicalCores);
        Assert.Empty(info.RunningJobs);
    }

    [Fact]
    public async Task StartAsync_LegacyOverload_ListensOnTheGivenAddress()
    {
        await using var host = await AgentHost.StartAsync(IPAddress.Loopback, 0, new AgentOptions { Slots = 2, Security = Security }).WaitAsync(Timeout);
        using var channel = ChannelTo(host);

        var info = await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal(2, info.Slots);
        Assert.Equal("", info.Domain);
    }

    [LinuxFact]
    public async Task DisposeAsync_RankRunning_KillsIt()
    {
        // Arrange
        var host = await StartOnFreePortAsync();
        int pid = 0;
        try
        {
            using var channel = ChannelTo(host);
            using var call = new CancellationTokenSource(Timeout);
            var (events, started, _) = await LaunchSleeperAsync(channel, "dispose-job", call.Token);
            pid = started;
            Assert.True(IsRunning(pid), $"rank process {pid} did not start");

            // Act
            await host.DisposeAsync().AsTask().WaitAsync(Timeout);

            // Assert
            await WaitUntilGoneAsync(pid);
            Assert.False(IsRunning(pid), $"rank process {pid} outlived its agent");
            await DrainAsync(events).WaitAsync(Timeout);
        }
        finally
        {
            await host.DisposeAsync();
            KillIfRunning(pid);
        }
    }

    [LinuxFact]
    public async Task Kill_WrongTokenThenJobToken_RefusesThenKillsTheRank()
    {
        // Arrange
        await using var host = await StartOnFreePortAsync();
        int pid = 0;
        try
        {
            using var channel = ChannelTo(host);
            using var call = new CancellationTokenSource(Timeout);
            var (events, started, token) = await LaunchSleeperAsync(channel, "kill-job", call.Token);
            pid = started;

            // Act
            var refused = await Assert.ThrowsAsync<RpcException>(() =>
                new AgentClient(channel).KillAsync(new KillRequest { JobId = "kill-job", JobToken = "guess" }).ResponseAsync).WaitAsync(Timeout);
            bool survivedRefusal = IsRunning(pid);
            var reply = await new AgentClient(channel).KillAsync(new KillRequest { JobId = "kill-job", JobToken = token }).ResponseAsync.WaitAsync(Timeout);

            // Assert
            Assert.Equal(StatusCode.PermissionDenied, refused.StatusCode);
            Assert.True(survivedRefusal, $"rank process {pid} was killed by a caller without the job's token");
            Assert.Equal(1, reply.Killed);
            var rest = await DrainAsync(events).WaitAsync(Timeout);
            Assert.Contains(rest, item => item.BodyCase == LaunchEvent.BodyOneofCase.Exited && item.Exited.Killed);
            Assert.False(IsRunning(pid), $"rank process {pid} outlived Kill");
        }
        finally
        {
            KillIfRunning(pid);
        }
    }

    [LinuxFact]
    public async Task Meters_LaunchThenKill_CountTheRankStartedRunningAndKilled()
    {
        // Arrange: this host's meter alone (other tests' agents run beside it in this process).
        await using var host = await StartOnFreePortAsync();
        var meter = host.Services.GetRequiredService<AgentMeters>().Meter;
        var measured = new ConcurrentDictionary<string, long>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter == meter) listener.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string outcome = tags.ToArray().FirstOrDefault(tag => tag.Key == "pmpi.outcome").Value as string ?? "";
            measured.AddOrUpdate(outcome.Length == 0 ? instrument.Name : $"{instrument.Name}:{outcome}", value, (_, sum) => sum + value);
        });
        listener.Start();
        int pid = 0;
        try
        {
            using var channel = ChannelTo(host);
            using var call = new CancellationTokenSource(Timeout);

            // Act
            var (events, started, token) = await LaunchSleeperAsync(channel, "meter-job", call.Token);
            pid = started;
            var whileRunning = new Dictionary<string, long>(measured);
            await new AgentClient(channel).KillAsync(new KillRequest { JobId = "meter-job", JobToken = token }).ResponseAsync.WaitAsync(Timeout);
            await DrainAsync(events).WaitAsync(Timeout);

            // Assert
            Assert.Equal((1L, 1L, 1L), (whileRunning["pmpi.agent.launches.running"], whileRunning["pmpi.agent.ranks.running"], whileRunning["pmpi.agent.ranks.started"]));
            Assert.Equal((0L, 0L, 1L), (measured["pmpi.agent.launches.running"], measured["pmpi.agent.ranks.running"], measured["pmpi.agent.ranks.exited:killed"]));
        }
        finally
        {
            KillIfRunning(pid);
        }
    }

    [LinuxFact]
    public async Task StopApplication_RankRunning_KillsItAndEndsTheLaunchCall()
    {
        // Arrange: StopApplication is what SIGTERM and Ctrl+C trigger through the host's console lifetime.
        await using var host = await StartOnFreePortAsync();
        int pid = 0;
        try
        {
            using var channel = ChannelTo(host);
            using var call = new CancellationTokenSource(Timeout);
            var (events, started, _) = await LaunchSleeperAsync(channel, "stop-job", call.Token);
            pid = started;
            var shutdownRequested = host.WaitForShutdownRequestAsync();

            // Act
            host.Services.GetRequiredService<IHostApplicationLifetime>().StopApplication();

            // Assert: the rank dies before the server drains, and the Launch call ends blaming the shutdown, not the
            // rank (a master must not report a rank failure for a rank the agent killed).
            await shutdownRequested.WaitAsync(Timeout);
            var error = await Assert.ThrowsAsync<RpcException>(async () =>
            {
                while (await events.MoveNextAsync())
                    Assert.NotEqual(LaunchEvent.BodyOneofCase.Exited, events.Current.BodyCase);
            }).WaitAsync(Timeout);
            await events.DisposeAsync();
            Assert.Equal(StatusCode.Unavailable, error.StatusCode);
            Assert.Contains("shutting down", error.Status.Detail);
            await WaitUntilGoneAsync(pid);
            Assert.False(IsRunning(pid), $"rank process {pid} outlived the stop");
        }
        finally
        {
            KillIfRunning(pid);
        }
    }

    [LinuxFact]
    public async Task Submit_AgentBoundToEveryInterface_HandsRanksTheRankAddressAsMaster()
    {
        // Arrange: 127.0.0.2 stands for this node's network address (Linux routes all of 127/8 to loopback); beyond
        // loopback the agent needs the cluster credential, so it speaks TLS.
        var directory = Directory.CreateTempSubdirectory("pmpi-agent-tests-");
        try
        {
            var tls = RpcSecurity.MutualTls(ClusterCredentials.Initialize(Path.Combine(directory.FullName, "cluster"), ["127.0.0.2"]));
            await using var host = await StartOnFreePortAsync(options =>
            {
                options.BindAddress = "0.0.0.0";
                options.RankBindAddress = "127.0.0.2";
                options.Security = tls;
            });
            using var channel = RpcChannels.For(host.Address, tls);
            var lines = await SubmitAsync(channel, """
                <computation name="where-is-master" xmlns="urn:pmpi:computation:v1">
                  <ranks program="/bin/sh" count="1"><arg>-c</arg><arg>echo "$PMPI_MASTER"</arg></ranks>
                </computation>
                """);

            // Assert: remote ranks could not dial the 127.0.0.1 that this host dials itself.
            Assert.Equal(IPAddress.Loopback.ToString(), host.Address.Host);
            Assert.Equal([$"https://127.0.0.2:{host.Address.Port}/"], lines);
        }
        finally
        {
            directory.Delete(recursive: true);
        }
    }

    [LinuxFact]
    public async Task Submit_RanksWithAProcessorEach_StartWithoutTheTieringDelayUnlessTheirEnvironmentSetsIt()
    {
        // Arrange: the ranks print the .NET setting the agent adds; one more rank than processors is oversubscribed.
        await using var host = await StartOnFreePortAsync();
        using var channel = ChannelTo(host);
        static string Ranks(int count, string environment = "") => $"""
            <computation name="tiering" xmlns="urn:pmpi:computation:v1" oversubscribe="true">
              <ranks program="/bin/sh" count="{count}"><arg>-c</arg><arg>echo "delay=$DOTNET_TC_CallCountingDelayMs"</arg>{environment}</ranks>
            </computation>
            """;

        // Act
        var alone = await SubmitAsync(channel, Ranks(1));
        var chosen = await SubmitAsync(channel, Ranks(1, """<env name="DOTNET_TC_CallCountingDelayMs" value="100"/>"""));
        var oversubscribed = await SubmitAsync(channel, Ranks(System.Environment.ProcessorCount + 1));

        // Assert
        Assert.Equal(["delay=0"], alone);
        Assert.Equal(["delay=100"], chosen);
        Assert.Equal(Enumerable.Repeat("delay=", System.Environment.ProcessorCount + 1), oversubscribed);
    }

    [LinuxFact]
    public async Task Register_UnknownJobAndRunningJobWithAWrongKey_RefusedAlike()
    {
        // Arrange: a running job whose rank never registers (a shell that sleeps), so the master holds it.
        await using var host = await StartOnFreePortAsync();
        using var channel = ChannelTo(host);
        using var submit = new CancellationTokenSource(Timeout);
        var request = new SubmitRequest
        {
            FileName = Path.Combine(Path.GetTempPath(), "register-alike.xml"),
            ComputationXml = """
                <computation name="register-alike" xmlns="urn:pmpi:computation:v1">
                  <ranks program="/bin/sh" count="1"><arg>-c</arg><arg>sleep 60</arg></ranks>
                </computation>
                """,
        };
        await using var events = new MasterClient(channel).Submit(request, cancellationToken: submit.Token).ResponseStream.ReadAllAsync(submit.Token).GetAsyncEnumerator(submit.Token);
        Assert.True(await events.MoveNextAsync().AsTask().WaitAsync(Timeout), "the Submit call ended before the job started");
        var jobId = events.Current.Progress.JobId;
        Assert.NotEmpty(jobId);

        // Act: the same guess of a key, for the running job and for one that does not exist.
        var jobControl = new JobControlClient(channel);
        var wrongKey = await Assert.ThrowsAsync<RpcException>(() =>
            jobControl.RegisterAsync(new RegisterRequest { JobId = jobId, JobToken = "guess", Endpoint = "http://127.0.0.1:1" }).ResponseAsync).WaitAsync(Timeout);
        var unknownJob = await Assert.ThrowsAsync<RpcException>(() =>
            jobControl.RegisterAsync(new RegisterRequest { JobId = "no-such-job", JobToken = "guess", Endpoint = "http://127.0.0.1:1" }).ResponseAsync).WaitAsync(Timeout);
        submit.Cancel(); // the submitter goes: the job fails and its rank is killed

        // Assert: nothing tells the running job from the guess but the id the caller gave.
        Assert.Equal(StatusCode.PermissionDenied, wrongKey.StatusCode);
        Assert.Equal(wrongKey.StatusCode, unknownJob.StatusCode);
        Assert.Equal(wrongKey.Status.Detail.Replace(jobId, "ID", StringComparison.Ordinal), unknownJob.Status.Detail.Replace("no-such-job", "ID", StringComparison.Ordinal));
    }

    [Fact]
    public async Task CallRefused_OneCallerRefusedFiftyTimes_OneLineInFullTheRestCountedAndEveryOneMetered()
    {
        // Arrange: an agent whose log is kept and whose refusal meter is read (its own: other tests' agents run in
        // this process), and a caller without the run's secret.
        var log = new RecordingLoggerProvider();
        var host = await AgentHost.StartAsync(options =>
        {
            options.Port = 0;
            options.Security = Security;
        }, builder => builder.Logging.AddProvider(log)).WaitAsync(Timeout);
        var meters = host.Services.GetRequiredService<IMeterFactory>();
        long metered = 0;
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == meters && instrument.Meter.Name == KestrelGrpcExtensions.RefusalsMeterName) listener.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (instrument.Name == "pmpi.daemon.refusals" && tags.ToArray().Any(tag => tag.Key == "pmpi.refusal.kind" && tag.Value as string == "/pmpi.v1.Agent/GetNodeInfo calls (Unauthenticated)"))
                Interlocked.Add(ref metered, value);
        });
        listener.Start();
        using var stranger = RpcChannels.For(host.Address, RpcSecurity.ForThisProcess());

        // Act
        for (int call = 0; call < 50; call++)
        {
            var refused = await Assert.ThrowsAsync<RpcException>(() =>
                new AgentClient(stranger).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync).WaitAsync(Timeout);
            Assert.Equal(StatusCode.Unauthenticated, refused.StatusCode);
        }
        await host.DisposeAsync().AsTask().WaitAsync(Timeout); // ends the interval early: the count is written

        // Assert
        Assert.Single(log.Lines, line => line.Event == "CallRefused");
        Assert.Contains(log.Lines, line => line.Event == "RefusalsSummarized" && line.Message == "Refused 49 more /pmpi.v1.Agent/GetNodeInfo calls (Unauthenticated) from 127.0.0.1 in the last 10 s");
        Assert.Equal(50, Interlocked.Read(ref metered));
    }

    [Fact]
    public async Task StartAsync_NoSecurity_ThrowsNamingTheOption()
    {
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => AgentHost.StartAsync(options => options.Port = 0).WaitAsync(Timeout));

        Assert.Contains("AgentOptions.Security is not set", Assert.Single(error.Failures));
    }

    [Fact]
    public async Task StartAsync_SignedRequestsBeyondLoopback_ThrowsNamingTheBindAddress()
    {
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => StartOnFreePortAsync(options => options.BindAddress = "0.0.0.0"));

        Assert.Contains("AgentOptions.BindAddress '0.0.0.0' is beyond loopback", Assert.Single(error.Failures));
    }

    private static async Task<List<string>> SubmitAsync(GrpcChannel channel, string xml)
    {
        var request = new SubmitRequest { FileName = Path.Combine(Path.GetTempPath(), "submitted.xml"), ComputationXml = xml };
        using var call = new CancellationTokenSource(Timeout);
        var lines = new List<string>();
        await foreach (var item in new MasterClient(channel).Submit(request, cancellationToken: call.Token).ResponseStream.ReadAllAsync(call.Token))
            if (item.BodyCase == JobEvent.BodyOneofCase.Output) lines.Add(item.Output.Line);
        return lines;
    }

    [Theory]
    [InlineData("Slots", "at least 1")]
    [InlineData("BindAddress", "'not-an-address' is not an IP address")]
    [InlineData("Port", "70000 is not a TCP port")]
    [InlineData("RankBindAddress", "'node-7' is not an IP address")]
    [InlineData("Gateway", "'gw:7400' is not host:port of the node's domain's gateway (it needs --domain too)")]
    public async Task StartAsync_InvalidOption_ThrowsNamingTheOption(string option, string expected)
    {
        Action<AgentOptions> configure = option switch
        {
            "Gateway" => options => options.Gateway = "gw:7400",
            "Slots" => options => options.Slots = 0,
            "BindAddress" => options => options.BindAddress = "not-an-address",
            "Port" => options => options.Port = 70000,
            _ => options => options.RankBindAddress = "node-7",
        };

        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => AgentHost.StartAsync(options =>
        {
            options.Security = Security;
            configure(options);
        }).WaitAsync(Timeout));

        var failure = Assert.Single(error.Failures);
        Assert.Contains($"AgentOptions.{option}", failure);
        Assert.Contains(expected, failure);
    }

    [Fact]
    public async Task AddPmpiAgent_NodeInfoProviderRegisteredFirst_IsKept()
    {
        // Arrange: an application hosting the agent in its own builder, with its own node description.
        var builder = WebApplication.CreateSlimBuilder();
        builder.Services.AddSingleton<INodeInfoProvider>(new FixedNodeInfo());
        builder.Services.AddPmpiAgent(options =>
        {
            options.Port = 0;
            options.Security = Security;
        });
        await using var app = builder.Build();
        app.MapPmpiAgent();
        await app.StartAsync().WaitAsync(Timeout);
        try
        {
            var address = new Uri(app.Urls.Single());
            using var channel = RpcChannels.For(address, Security);

            // Act
            var info = await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);

            // Assert
            Assert.Equal("fixed-node", info.NodeName);
        }
        finally
        {
            await app.StopAsync().WaitAsync(Timeout);
        }
    }

    /// <summary>
    /// Launches one rank, `/bin/sh -c 'sleep 60'`, under a ticket as a master would sign it, and returns the call's
    /// remaining events, the rank's pid and the job's token.
    /// </summary>
    private static async Task<(IAsyncEnumerator<LaunchEvent> Events, int ProcessId, string JobToken)> LaunchSleeperAsync(GrpcChannel channel, string jobId, CancellationToken cancellationToken)
    {
        var ticket = JobTickets.Create(jobId, worldSize: 1);
        ticket.Agents.Add(new AgentRanks { Agent = channel.Target, Ranks = { 0 } });
        var (bytes, signature) = JobTickets.Sign(Security, ticket);
        var request = new LaunchRequest { JobId = jobId, WorldSize = 1, MasterAddress = "http://127.0.0.1:1", Ticket = bytes, TicketSignature = signature };
        request.Ranks.Add(new RankLaunch { Rank = 0, Program = "/bin/sh", Arguments = { "-c", "sleep 60" }, WorkingDirectory = Path.GetTempPath() });
        var events = new AgentClient(channel).Launch(request, cancellationToken: cancellationToken).ResponseStream.ReadAllAsync(cancellationToken).GetAsyncEnumerator(cancellationToken);
        // The agent's heartbeats (one a second) may come first.
        do Assert.True(await events.MoveNextAsync().AsTask().WaitAsync(Timeout), "the Launch call ended before its rank started");
        while (events.Current.BodyCase == LaunchEvent.BodyOneofCase.Heartbeat);
        Assert.Equal(LaunchEvent.BodyOneofCase.Started, events.Current.BodyCase);
        return (events, events.Current.Started.ProcessId, JobTickets.JobToken(Security, ticket));
    }

    /// <summary>Reads a Launch call to its end, whichever way it ends (OK, or an error as the server goes away).</summary>
    private static async Task<List<LaunchEvent>> DrainAsync(IAsyncEnumerator<LaunchEvent> events)
    {
        var rest = new List<LaunchEvent>();
        try
        {
            while (await events.MoveNextAsync()) rest.Add(events.Current);
        }
        catch (Exception e) when (e is RpcException or HttpRequestException or IOException)
        {
            // The server stopped under the call; what was read still counts.
        }
        finally
        {
            await events.DisposeAsync();
        }
        return rest;
    }

    private static bool IsRunning(int pid)
    {
        if (pid <= 0) return false;
        // A zombie still has a /proc entry; its state letter is Z.
        var stat = $"/proc/{pid}/stat";
        if (!File.Exists(stat)) return false;
        try
        {
            var text = File.ReadAllText(stat);
            return text[(text.LastIndexOf(')') + 2)..].FirstOrDefault() != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
    }

    private static async Task WaitUntilGoneAsync(int pid)
    {
        var clock = Stopwatch.StartNew();
        while (IsRunning(pid) && clock.Elapsed < Timeout) await Task.Delay(20);
    }

    private static void KillIfRunning(int pid)
    {
        if (!IsRunning(pid)) return;
        try
        {
            using var process = Process.GetProcessById(pid);
            process.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            // Gone meanwhile.
        }
    }

    private sealed class FixedNodeInfo : INodeInfoProvider
    {
        public NodeMetadata GetMetadata() => new("fixed-node", 1, null, null, null, null, 1 << 30, null, "test OS", "1.0", Architecture.X64, ".NET");
    }
}
