using System.Net;
using System.Text;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Integration.Tests.Security;

/// <summary>
/// A rank launched by a real agent gets its job key through a file it deletes, holds no secret in its environment or
/// command line, and its endpoint refuses a stream that does not prove the job key.
/// </summary>
[Trait("Category", "Security")]
public sealed class RankSecretTests(SecurityFixture fixture) : IClassFixture<SecurityFixture>
{
    [LinuxFact]
    public async Task RunningRank_ProcEnvironAndCmdline_HoldNoSecretAndTheKeyFileIsGone()
    {
        // Arrange: this test is the master, so it knows the job key; the rank blocks registering with it.
        await using var master = await HeldRegistrations.StartAsync();
        var jobId = $"secrets-{Guid.NewGuid():N}";
        var request = Launch(jobId, master.Address);
        var token = JobTickets.JobToken(TestCluster.Security, JobTicket.Parser.ParseFrom(request.Ticket));
        using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);
        using var call = new CancellationTokenSource(PmpiCli.Timeout);
        var events = new AgentClient(channel).Launch(request, cancellationToken: call.Token).ResponseStream.ReadAllAsync(call.Token).GetAsyncEnumerator(call.Token);
        try
        {
            Assert.True(await events.MoveNextAsync(), "the launch ended before its rank started");
            int pid = events.Current.Started.ProcessId;
            var registration = await master.Registered.WaitAsync(PmpiCli.Timeout);

            // Act
            var environ = await File.ReadAllBytesAsync($"/proc/{pid}/environ");
            var cmdline = await File.ReadAllBytesAsync($"/proc/{pid}/cmdline");

            // Assert: the rank knew the key (it registered with it), yet neither place holds it in any usual form.
            Assert.Equal(token, registration.JobToken);
            var key = Convert.FromBase64String(token);
            foreach (var (what, bytes) in new[] { ("environ", environ), ("cmdline", cmdline) })
            {
                var text = Encoding.UTF8.GetString(bytes);
                Assert.DoesNotContain(token, text, StringComparison.Ordinal);
                Assert.DoesNotContain(Convert.ToHexString(key), text, StringComparison.OrdinalIgnoreCase);
                Assert.True(bytes.AsSpan().IndexOf(key) < 0, $"the raw job key is in /proc/{pid}/{what}");
                Assert.DoesNotContain("PMPI_JOB_TOKEN", text, StringComparison.Ordinal);
            }
            var keyFile = Encoding.UTF8.GetString(environ).Split('\0').Single(entry => entry.StartsWith($"{RankEnvironment.CredentialsFile}=", StringComparison.Ordinal));
            var path = keyFile[(RankEnvironment.CredentialsFile.Length + 1)..];
            Assert.False(File.Exists(path), $"the rank did not delete its key file {path}");
            if (OperatingSystem.IsLinux() && Directory.Exists(Path.GetDirectoryName(path)))
                Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.GetDirectoryName(path)!));
        }
        finally
        {
            await call.CancelAsync();
            await DisposeQuietlyAsync(events);
        }
    }

    [Theory]
    [InlineData("wrong key", StatusCode.PermissionDenied)]
    [InlineData("other job", StatusCode.PermissionDenied)]
    [InlineData("no hello", StatusCode.InvalidArgument)]
    public async Task Connect_WithoutTheJobKey_Refused(string what, StatusCode expected)
    {
        // Arrange: a real rank process, blocked registering with this test's master, whose endpoint already serves.
        await using var master = await HeldRegistrations.StartAsync();
        var jobId = $"connect-{Guid.NewGuid():N}";
        using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);
        using var call = new CancellationTokenSource(PmpiCli.Timeout);
        var events = new AgentClient(channel).Launch(Launch(jobId, master.Address), cancellationToken: call.Token).ResponseStream.ReadAllAsync(call.Token).GetAsyncEnumerator(call.Token);
        try
        {
            Assert.True(await events.MoveNextAsync(), "the launch ended before its rank started");
            var registration = await master.Registered.WaitAsync(PmpiCli.Timeout);
            using var rank = RpcChannels.For(new Uri(registration.Endpoint));
            var first = what switch
            {
                "wrong key" => new Frame { Hello = new Hello { JobId = jobId, JobToken = Convert.ToBase64String(new byte[32]), SourceWorldRank = 0 } },
                "other job" => new Frame { Hello = new Hello { JobId = "another-job", JobToken = registration.JobToken, SourceWorldRank = 0 } },
                _ => new Frame { Ack = new Ack { Sequence = 1 } },
            };

            // Act
            var error = await Assert.ThrowsAsync<RpcException>(async () =>
            {
                using var stream = rank.StartCall(GrpcMethods.Connect, TimeSpan.FromSeconds(10));
                await stream.RequestStream.WriteAsync(first);
                await stream.ResponseStream.ReadToEndAsync(PmpiCli.Timeout);
            }).WaitAsync(PmpiCli.Timeout);

            // Assert
            Assert.Equal(expected, error.StatusCode);
        }
        finally
        {
            await call.CancelAsync();
            await DisposeQuietlyAsync(events);
        }
    }

    private LaunchRequest Launch(string jobId, Uri master)
    {
        var request = fixture.MarkerLaunch(jobId, fixture.NewMarker(), TestCluster.Security);
        request.MasterAddress = master.ToString();
        request.Ranks[0].Arguments.Clear();
        request.Ranks[0].Arguments.Add("block");
        return request;
    }

    private static async Task DisposeQuietlyAsync(IAsyncEnumerator<LaunchEvent> events)
    {
        try
        {
            await events.DisposeAsync();
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException)
        {
            // Cancelling the launch is how the test has the agent kill the rank.
        }
    }

    /// <summary>A master that records the first Register call and holds every call open, so the rank blocks there.</summary>
    private sealed class HeldRegistrations : IAsyncDisposable
    {
        private readonly TaskCompletionSource<RegisterRequest> _registered = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private RpcServer? _server;

        public Uri Address => _server!.Address;

        public Task<RegisterRequest> Registered => _registered.Task;

        public static async Task<HeldRegistrations> StartAsync()
        {
            var master = new HeldRegistrations();
            master._server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<HeldJobControl>(),
                services => services.AddSingleton(master._registered)).WaitAsync(PmpiCli.Timeout);
            return master;
        }

        private sealed class HeldJobControl(TaskCompletionSource<RegisterRequest> registered) : JobControl.JobControlBase
        {
            public override async Task<RankTable> Register(RegisterRequest request, ServerCallContext context)
            {
                registered.TrySetResult(request);
                await Task.Delay(Timeout.Infinite, context.CancellationToken);
                return new RankTable();
            }
        }

        public async ValueTask DisposeAsync()
        {
            if (_server is not null) await _server.DisposeAsync();
        }
    }
}
