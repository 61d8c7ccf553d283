using Grpc.Core;
using Pmpi.Agent.Hosting;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Agent.Tests.Hosting;

/// <summary>
/// Every method of an agent and its master, called with gRPC for .NET's generated clients over
/// <see cref="RpcChannels"/>: without the cluster's credential a member's method is refused as UNAUTHENTICATED, and a
/// rank's (whose credential is its job's key) as PERMISSION_DENIED for a job key that is not the job's; with it, each
/// gets past the caller check to its own answer.
/// </summary>
public sealed class ControlPlaneClientTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static DateTime Deadline => DateTime.UtcNow + Timeout;

    /// <summary>Each method, called once on <paramref name="channel"/>; what it answers is the test's business.</summary>
    public static TheoryData<string> Methods =>
        ["Agent.GetNodeInfo", "Agent.Launch", "Agent.Kill", "Agent.MissingFiles", "Agent.Upload", "Master.Submit", "JobControl.Register", "JobControl.Abort", "JobControl.Spawn", "JobControl.Linked"];

    private static async Task CallAsync(string method, Grpc.Net.Client.GrpcChannel channel)
    {
        var agent = new AgentClient(channel);
        var master = new Rpc.V1.Master.MasterClient(channel);
        var job = new JobControl.JobControlClient(channel);
        switch (method)
        {
            case "Agent.GetNodeInfo":
                await agent.GetNodeInfoAsync(new NodeInfoRequest(), deadline: Deadline);
                break;
            case "Agent.Launch":
                using (var call = agent.Launch(new LaunchRequest { JobId = "no-such-job" }, deadline: Deadline))
                    while (await call.ResponseStream.MoveNext(CancellationToken.None)) { }
                break;
            case "Agent.Kill":
                await agent.KillAsync(new KillRequest { JobId = "no-such-job", JobToken = "x" }, deadline: Deadline);
                break;
            case "Agent.MissingFiles":
                await agent.MissingFilesAsync(new StagedProgram(), deadline: Deadline);
                break;
            case "Agent.Upload":
                using (var call = agent.Upload(deadline: Deadline))
                {
                    await call.RequestStream.CompleteAsync();
                    await call.ResponseAsync;
                }
                break;
            case "Master.Submit":
                using (var call = master.Submit(new SubmitRequest { FileName = "empty.json" }, deadline: Deadline))
                    while (await call.ResponseStream.MoveNext(CancellationToken.None)) { }
                break;
            case "JobControl.Register":
                await job.RegisterAsync(new RegisterRequest { JobId = "no-such-job", JobToken = "x" }, deadline: Deadline);
                break;
            case "JobControl.Abort":
                await job.AbortAsync(new AbortRequest { JobId = "no-such-job", JobToken = "x" }, deadline: Deadline);
                break;
            case "JobControl.Spawn":
                await job.SpawnAsync(new SpawnRequest { JobId = "no-such-job", JobToken = "x", Count = 1, Program = "p" }, deadline: Deadline);
                break;
            case "JobControl.Linked":
                await job.LinkedAsync(new LinkedRequest { JobId = "no-such-job", JobToken = "x" }, deadline: Deadline);
                break;
        }
    }

    [Theory]
    [InlineData("Agent.GetNodeInfo", StatusCode.Unauthenticated)]
    [InlineData("Agent.Launch", StatusCode.Unauthenticated)]
    [InlineData("Agent.Kill", StatusCode.Unauthenticated)]
    [InlineData("Agent.MissingFiles", StatusCode.Unauthenticated)]
    [InlineData("Agent.Upload", StatusCode.Unauthenticated)]
    [InlineData("Master.Submit", StatusCode.Unauthenticated)]
    [InlineData("JobControl.Register", StatusCode.PermissionDenied)]
    [InlineData("JobControl.Abort", StatusCode.PermissionDenied)]
    [InlineData("JobControl.Spawn", StatusCode.PermissionDenied)]
    [InlineData("JobControl.Linked", StatusCode.PermissionDenied)]
    public async Task Call_WithoutTheCredential_IsRefused(string method, StatusCode expected)
    {
        // Arrange
        var security = RpcSecurity.ForThisProcess();
        await using var host = await AgentHost.StartAsync(options => { options.Port = 0; options.Security = security; }).WaitAsync(Timeout);
        using var channel = RpcChannels.For(host.Address);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => CallAsync(method, channel));

        // Assert
        Assert.True(error.StatusCode == expected, $"{error.StatusCode}: {error.Status.Detail}");
        Assert.Contains("refused", error.Status.Detail);
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task Call_WithTheCredential_GetsPastTheCallerCheck(string method)
    {
        // Arrange
        var security = RpcSecurity.ForThisProcess();
        await using var host = await AgentHost.StartAsync(options => { options.Port = 0; options.Security = security; }).WaitAsync(Timeout);
        using var channel = RpcChannels.For(host.Address, security);

        // Act: GetNodeInfo answers; the others answer or refuse a job that does not exist, each for its own reason.
        var error = await Record.ExceptionAsync(() => CallAsync(method, channel));

        // Assert
        if (method == "Agent.GetNodeInfo") Assert.Null(error);
        else Assert.True(error is null or RpcException { StatusCode: not StatusCode.Unauthenticated and not StatusCode.Unavailable and not StatusCode.Unimplemented },
            $"{method}: {error}");
    }
}
