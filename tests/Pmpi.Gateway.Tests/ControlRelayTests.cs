using System.Net;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;
using JobControlClient = Pmpi.Rpc.V1.JobControl.JobControlClient;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// Control calls (<see cref="ControlRoute"/>) through two real gateways: a master of domain a reaching an agent and the
/// gateway of domain b, a rank of domain b reaching the master, and every refusal. The master and the agent are one
/// real mutual-TLS endpoint of the cluster, which answers JobControl.Register and Agent.Kill and records the :authority
/// each call arrived with.
/// </summary>
public sealed class ControlRelayTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = GatewayPair.Timeout;
    private GatewayPair _pair = null!;
    private RpcServer _member = null!;
    private readonly List<string> _authorities = [];

    public async Task InitializeAsync()
    {
        _pair = await GatewayPair.StartAsync();
        _member = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
        {
            endpoints.MapGrpcService<MemberJobControl>();
            endpoints.MapGrpcService<MemberAgent>();
        }, services => services.AddSingleton(_authorities), _pair.Member).WaitAsync(Timeout);
    }

    public async Task DisposeAsync()
    {
        await _member.DisposeAsync();
        await _pair.DisposeAsync();
    }

    private string MemberAuthority => _member.Address.Authority;

    /// <summary>Job <paramref name="jobId"/> with its master (the member endpoint) in domain a and rank 1's agent (the same endpoint) in b, registered with both gateways.</summary>
    private async Task<string> RegisterAsync(string jobId)
    {
        var (job, token) = _pair.Job(jobId, agentB: MemberAuthority);
        job.MasterAddress = _member.Address.ToString();
        job.MasterDomain = "a";
        job.MasterGateway = GatewayPair.Trim(_pair.A.Address);
        await _pair.RegisterAsync(job);
        return token;
    }

    [Fact]
    public async Task Kill_FromTheMasterForAnAgentOfAnotherDomain_CrossesBothGatewaysWithTheAgentsAuthority()
    {
        await RegisterAsync("control-1");
        using var master = RpcChannels.For(_pair.A.Address, _pair.Member, metadata: ControlRoute.ToAgent("control-1", MemberAuthority));

        var reply = await new AgentClient(master).KillAsync(new KillRequest { JobId = "control-1" }).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal("control-1".Length, reply.Killed);
        // The agent checks a launch's ticket against the :authority it was dialed by: the relays must keep it its own.
        Assert.Equal([MemberAuthority], _authorities);
        foreach (var gateway in new[] { _pair.A, _pair.B }) Assert.Equal(1, (await _pair.StatusAsync(gateway)).ControlCallsRelayed);
    }

    [Fact]
    public async Task Register_FromARankOfAnotherDomainThanTheMaster_CrossesBothGateways()
    {
        var token = await RegisterAsync("control-2");
        using var rank = RpcChannels.For(_pair.B.Address, RpcSecurity.TrustingAuthority(_pair.Credentials.Authority), metadata: ControlRoute.ToMaster(token, "control-2", 1));

        var table = await new JobControlClient(rank).RegisterAsync(new RegisterRequest { JobId = "control-2", Rank = 1, Endpoint = "http://b1:1" }).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal("http://b1:1", table.Ranks.Single().Endpoint);
        foreach (var gateway in new[] { _pair.A, _pair.B }) Assert.Equal(1, (await _pair.StatusAsync(gateway)).ControlCallsRelayed);
    }

    [Fact]
    public async Task RegisterJob_ForAnotherDomainsGateway_IsRelayedAndServedThere()
    {
        var (job, _) = _pair.Job("control-3");
        job.MasterDomain = "a";
        using (var own = RpcChannels.For(_pair.A.Address, _pair.Member))
            await new GatewayClient(own).RegisterJobAsync(job).ResponseAsync.WaitAsync(Timeout);
        using var master = RpcChannels.For(_pair.A.Address, _pair.Member, metadata: ControlRoute.ToGateway("control-3", "b"));

        await new GatewayClient(master).RegisterJobAsync(job).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal(1, (await _pair.StatusAsync(_pair.B)).Jobs);
        Assert.Equal(1, (await _pair.StatusAsync(_pair.A)).ControlCallsRelayed);
    }

    public static TheoryData<string, StatusCode, string> Refusals => new()
    {
        { "no job header", StatusCode.InvalidArgument, "no pmpi-job header" },
        { "unknown destination", StatusCode.InvalidArgument, "is not 'agent HOST:PORT', 'gateway DOMAIN' or 'master'" },
        { "unregistered job", StatusCode.PermissionDenied, "is not registered here" },
        { "rank proof under another key", StatusCode.PermissionDenied, "route proof of rank 1 does not match" },
        { "method the agent does not serve", StatusCode.PermissionDenied, "/pmpi.v1.Agent/GetNodeInfo is not a method relayed to agent" },
        { "agent the ticket does not name", StatusCode.NotFound, "names no agent at 127.0.0.1:9" },
        { "agent call without cluster certificate", StatusCode.Unauthenticated, "does not come from a cluster member" },
        { "rank call from another domain without cluster certificate", StatusCode.Unauthenticated, "does not come from a cluster member" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task ControlCall_Refused_WithItsStatusAndNothingReachesTheEndpoint(string refusal, StatusCode expected, string detail)
    {
        var token = await RegisterAsync("control-4");
        var member = _pair.Member;
        var rank = RpcSecurity.TrustingAuthority(_pair.Credentials.Authority);
        (GatewayHost gateway, RpcSecurity security, IEnumerable<KeyValuePair<string, string>> route, string path) = refusal switch
        {
            "no job header" => (_pair.A, member, [new(ControlRoute.DestinationHeader, "master")], ServicePaths.Kill),
            "unknown destination" => (_pair.A, member, [new(RouteProof.JobHeader, "control-4"), new(ControlRoute.DestinationHeader, "submitter")], ServicePaths.Kill),
            "unregistered job" => (_pair.A, member, ControlRoute.ToAgent("elsewhere", MemberAuthority), ServicePaths.Kill),
            "rank proof under another key" => (_pair.B, rank, ControlRoute.ToMaster(Convert.ToBase64String(new byte[32]), "control-4", 1), ServicePaths.Register),
            "method the agent does not serve" => (_pair.A, member, ControlRoute.ToAgent("control-4", MemberAuthority), ServicePaths.GetNodeInfo),
            "agent the ticket does not name" => (_pair.A, member, ControlRoute.ToAgent("control-4", "127.0.0.1:9"), ServicePaths.Kill),
            "agent call without cluster certificate" => (_pair.A, rank, ControlRoute.ToAgent("control-4", MemberAuthority), ServicePaths.Kill),
            _ => (_pair.A, rank, ControlRoute.ToMaster(token, "control-4", 1), ServicePaths.Register),
        };
        using var channel = RpcChannels.For(gateway.Address, security, metadata: route);

        var method = GrpcMethods.Create<KillRequest, KillReply>(MethodType.Unary, path);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.CreateCallInvoker().AsyncUnaryCall(method, null, default, new KillRequest { JobId = "control-4" }).ResponseAsync.WaitAsync(Timeout));

        Assert.True(error.StatusCode == expected, $"Expected {expected}, got {error.StatusCode}: {error.Status.Detail}");
        Assert.Contains(detail, error.Status.Detail);
        Assert.Empty(_authorities);
        Assert.Equal(1, (await _pair.StatusAsync(gateway)).StreamsRefused);
    }

    /// <summary>The :authority a call arrived with, recorded in <paramref name="authorities"/>.</summary>
    private static void Record(List<string> authorities, ServerCallContext context)
    {
        lock (authorities) authorities.Add(context.GetHttpContext().Request.Host.Value ?? "");
    }

    private sealed class MemberJobControl(List<string> authorities) : JobControl.JobControlBase
    {
        public override Task<RankTable> Register(RegisterRequest request, ServerCallContext context)
        {
            Record(authorities, context);
            return Task.FromResult(new RankTable { Ranks = { new RankEntry { Rank = request.Rank, Endpoint = request.Endpoint } } });
        }
    }

    private sealed class MemberAgent(List<string> authorities) : Agent.AgentBase
    {
        public override Task<KillReply> Kill(KillRequest request, ServerCallContext context)
        {
            Record(authorities, context);
            return Task.FromResult(new KillReply { Killed = request.JobId.Length });
        }
    }
}
