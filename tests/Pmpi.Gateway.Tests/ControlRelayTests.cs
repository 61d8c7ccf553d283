using System.Net;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

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
            endpoints.MapGrpcUnary<RegisterRequest, RankTable>(ServicePaths.Register, (request, call) =>
            {
                lock (_authorities) _authorities.Add(call.HttpContext.Request.Host.Value ?? "");
                return Task.FromResult(new RankTable { Ranks = { new RankEntry { Rank = request.Rank, Endpoint = request.Endpoint } } });
            });
            endpoints.MapGrpcUnary<KillRequest, KillReply>(ServicePaths.Kill, (request, call) =>
            {
                lock (_authorities) _authorities.Add(call.HttpContext.Request.Host.Value ?? "");
                return Task.FromResult(new KillReply { Killed = request.JobId.Length });
            });
        }, security: _pair.Member).WaitAsync(Timeout);
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
        using var master = new RpcChannel(_pair.A.Address, security: _pair.Member, metadata: ControlRoute.ToAgent("control-1", MemberAuthority));

        var reply = await master.UnaryAsync<KillRequest, KillReply>(ServicePaths.Kill, new KillRequest { JobId = "control-1" }).WaitAsync(Timeout);

        Assert.Equal("control-1".Length, reply.Killed);
        // The agent checks a launch's ticket against the :authority it was dialed by: the relays must keep it its own.
        Assert.Equal([MemberAuthority], _authorities);
        foreach (var gateway in new[] { _pair.A, _pair.B }) Assert.Equal(1, (await _pair.StatusAsync(gateway)).ControlCallsRelayed);
    }

    [Fact]
    public async Task Register_FromARankOfAnotherDomainThanTheMaster_CrossesBothGateways()
    {
        var token = await RegisterAsync("control-2");
        using var rank = new RpcChannel(_pair.B.Address, security: RpcSecurity.TrustingAuthority(_pair.Credentials.Authority), metadata: ControlRoute.ToMaster(token, "control-2", 1));

        var table = await rank.UnaryAsync<RegisterRequest, RankTable>(ServicePaths.Register, new RegisterRequest { JobId = "control-2", Rank = 1, Endpoint = "http://b1:1" }).WaitAsync(Timeout);

        Assert.Equal("http://b1:1", table.Ranks.Single().Endpoint);
        foreach (var gateway in new[] { _pair.A, _pair.B }) Assert.Equal(1, (await _pair.StatusAsync(gateway)).ControlCallsRelayed);
    }

    [Fact]
    public async Task RegisterJob_ForAnotherDomainsGateway_IsRelayedAndServedThere()
    {
        var (job, _) = _pair.Job("control-3");
        job.MasterDomain = "a";
        using (var own = new RpcChannel(_pair.A.Address, security: _pair.Member))
            await own.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, job).WaitAsync(Timeout);
        using var master = new RpcChannel(_pair.A.Address, security: _pair.Member, metadata: ControlRoute.ToGateway("control-3", "b"));

        await master.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, job).WaitAsync(Timeout);

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
        using var channel = new RpcChannel(gateway.Address, security: security, metadata: route);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync<KillRequest, KillReply>(path, new KillRequest { JobId = "control-4" }).WaitAsync(Timeout));

        Assert.True(error.StatusCode == expected, $"Expected {expected}, got {error.StatusCode}: {error.Status.Detail}");
        Assert.Contains(detail, error.Status.Detail);
        Assert.Empty(_authorities);
        Assert.Equal(1, (await _pair.StatusAsync(gateway)).StreamsRefused);
    }
}
