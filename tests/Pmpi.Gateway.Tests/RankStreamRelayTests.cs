using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// RankTransport.Connect through two real gateways (domains a and b, mutual TLS between them) to a real rank endpoint:
/// what is relayed, what is refused and with which status, and that a refusal never stops the gateway.
/// </summary>
public sealed class RankStreamRelayTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = GatewayPair.Timeout;
    private GatewayPair _pair = null!;

    public async Task InitializeAsync() => _pair = await GatewayPair.StartAsync();

    public async Task DisposeAsync() => await _pair.DisposeAsync();

    [Fact]
    public async Task Connect_RegisteredJob_CrossesBothGatewaysBothWaysInOrder()
    {
        var (job, token) = _pair.Job("relay-1");
        await _pair.RegisterAsync(job);

        await _pair.EchoFromRankZeroAsync("relay-1", token);

        foreach (var gateway in new[] { _pair.A, _pair.B })
        {
            var status = await _pair.StatusAsync(gateway);
            Assert.Equal(1, status.Jobs);
            Assert.Equal(1, status.StreamsRelayed);
            Assert.Equal(0, status.StreamsOpen);
            Assert.True(status.BytesRelayed >= 2 * 3 * (1 << 20), $"{gateway.Address} relayed {status.BytesRelayed} bytes");
        }
    }

    [Fact]
    public async Task Connect_NoRouteHeaders_InvalidArgumentNamingTheHeader()
    {
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, []);

        AssertStatus(StatusCode.InvalidArgument, error);
        Assert.Contains("no pmpi-job header", error.Detail);
    }

    [Theory]
    [InlineData("-1")]
    [InlineData("one")]
    [InlineData("99999999999999999999")]
    [InlineData("")]
    public async Task Connect_MalformedDestination_InvalidArgumentAndTheGatewayServesOn(string destination)
    {
        var (job, token) = _pair.Job("relay-2");
        await _pair.RegisterAsync(job);
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, [new(RouteProof.JobHeader, "relay-2"), new(RouteProof.SourceHeader, "0"),
            new(RouteProof.DestinationHeader, destination), new(RouteProof.ProofHeader, RouteProof.Compute(token, "relay-2", 0, 1))]);

        AssertStatus(StatusCode.InvalidArgument, error);
        Assert.Contains(RouteProof.DestinationHeader, error.Detail);
        Assert.Equal(1, (await _pair.StatusAsync(_pair.A)).StreamsRefused);
    }

    [Fact]
    public async Task Connect_UnregisteredJob_PermissionDenied()
    {
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, RouteProof.Headers("some key", "never-registered", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, error);
        Assert.Contains("job 'never-registered' is not registered here", error.Detail);
    }

    [Fact]
    public async Task Connect_ProofUnderAnotherKey_PermissionDenied()
    {
        var (job, _) = _pair.Job("relay-3");
        await _pair.RegisterAsync(job);
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, RouteProof.Headers("not the job key", "relay-3", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, error);
    }

    [Fact]
    public async Task Connect_ProofForAnotherDestination_PermissionDenied()
    {
        var (job, token) = _pair.Job("relay-4");
        await _pair.RegisterAsync(job);
        using var channel = _pair.RankChannel(_pair.A);
        var headers = RouteProof.Headers(token, "relay-4", 0, 2).ToList();
        headers[2] = new(RouteProof.DestinationHeader, "1");

        var error = await CallAsync(channel, headers);

        AssertStatus(StatusCode.PermissionDenied, error);
    }

    [Fact]
    public async Task Connect_HelloForAnotherRankThanTheHeaders_RefusedByTheRankWithItsStatusRelayed()
    {
        // The headers (checked by the gateways) name rank 1; the Hello inside (checked by the rank) names rank 2.
        var (job, token) = _pair.Job("relay-9");
        await _pair.RegisterAsync(job);
        using var channel = _pair.RankChannel(_pair.A);

        var error = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await using var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, RouteProof.Headers(token, "relay-9", 0, GatewayPair.EchoRank)).WaitAsync(Timeout);
            await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = "relay-9", JobToken = token, SourceWorldRank = 0, DestinationWorldRank = 2 } }, default).AsTask().WaitAsync(Timeout);
            await call.CompleteRequestsAsync().WaitAsync(Timeout);
            while (await call.Responses.ReadAsync(default).AsTask().WaitAsync(Timeout) is not null) { }
        });

        AssertStatus(StatusCode.NotFound, error);
        Assert.Contains("not 2", error.Detail);
        Assert.Equal(1, (await _pair.StatusAsync(_pair.B)).StreamsRelayed);
    }

    [Fact]
    public async Task Connect_NeitherRankInTheGatewaysDomain_FailedPrecondition()
    {
        var (job, token) = _pair.Job("relay-5");
        await _pair.RegisterAsync(job);
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, RouteProof.Headers(token, "relay-5", 1, 2));

        AssertStatus(StatusCode.FailedPrecondition, error);
        Assert.Contains("neither rank is in domain 'a'", error.Detail);
    }

    [Fact]
    public async Task Connect_FromAnotherDomainWithoutClusterCertificate_Unauthenticated()
    {
        var (job, token) = _pair.Job("relay-6");
        await _pair.RegisterAsync(job);
        // Straight to b as if from a's rank, but without being a's gateway.
        using var channel = _pair.RankChannel(_pair.B);

        var error = await CallAsync(channel, RouteProof.Headers(token, "relay-6", 0, 1));

        AssertStatus(StatusCode.Unauthenticated, error);
    }

    [Fact]
    public async Task Connect_RemovedJob_PermissionDenied()
    {
        var (job, token) = _pair.Job("relay-7");
        await _pair.RegisterAsync(job);
        using (var master = new RpcChannel(_pair.A.Address, security: _pair.Member))
            await master.UnaryAsync<RemoveJobRequest, RemoveJobReply>(ServicePaths.RemoveJob, new RemoveJobRequest { JobId = "relay-7" }).WaitAsync(Timeout);
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, RouteProof.Headers(token, "relay-7", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, error);
        Assert.Equal(0, (await _pair.StatusAsync(_pair.A)).Jobs);
    }

    [Fact]
    public async Task Connect_PeerGatewayDown_UnavailableNamingTheRanksDomainsAndHop()
    {
        var (job, token) = _pair.Job("relay-8");
        await _pair.RegisterAsync(job);
        var b = GatewayPair.Trim(_pair.B.Address);
        await _pair.StopBAsync();
        using var channel = _pair.RankChannel(_pair.A);

        var error = await CallAsync(channel, RouteProof.Headers(token, "relay-8", 0, 1));

        AssertStatus(StatusCode.Unavailable, error);
        Assert.Contains("rank 0 (domain 'a') -> rank 1 (domain 'b')", error.Detail);
        Assert.Contains($"the gateway of domain 'b' at {b}", error.Detail);
    }

    [Fact]
    public async Task RegisterJob_WithoutClusterCertificate_Unauthenticated()
    {
        var (job, _) = _pair.Job("register-1");
        using var channel = _pair.RankChannel(_pair.A);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, job).WaitAsync(Timeout));

        AssertStatus(StatusCode.Unauthenticated, error);
    }

    [Fact]
    public async Task RegisterJob_TicketSignedWithAnotherKey_PermissionDenied()
    {
        var (job, _) = _pair.Job("register-2");
        job.TicketSignature = Google.Protobuf.ByteString.CopyFrom(new byte[32]);
        using var channel = new RpcChannel(_pair.A.Address, security: _pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, job).WaitAsync(Timeout));

        AssertStatus(StatusCode.PermissionDenied, error);
        Assert.Contains("signature", error.Detail);
    }

    [Fact]
    public async Task RegisterJob_NoRankInTheDomain_FailedPrecondition()
    {
        var (job, _) = _pair.Job("register-3");
        foreach (var entry in job.Table.Ranks) entry.Domain = "elsewhere";
        using var channel = new RpcChannel(_pair.A.Address, security: _pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, job).WaitAsync(Timeout));

        AssertStatus(StatusCode.FailedPrecondition, error);
    }

    [Fact]
    public async Task RegisterJob_BeyondMaxJobs_ResourceExhaustedAndTheRegisteredOnesStillRelay()
    {
        await using var pair = await GatewayPair.StartAsync(maxJobs: 2);
        var (first, token) = pair.Job("bounded-1");
        await pair.RegisterAsync(first);
        await pair.RegisterAsync(pair.Job("bounded-2").Request);
        using var master = new RpcChannel(pair.A.Address, security: pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => master.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, pair.Job("bounded-3").Request).WaitAsync(Timeout));

        AssertStatus(StatusCode.ResourceExhausted, error);
        Assert.Contains("GatewayOptions.MaxJobs", error.Detail);
        // A registered job renews its table, and streams for it are still relayed.
        await master.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, first).WaitAsync(Timeout);
        using var channel = pair.RankChannel(pair.A);
        await using var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, RouteProof.Headers(token, "bounded-1", 0, GatewayPair.EchoRank)).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = "bounded-1", JobToken = token, SourceWorldRank = 0, DestinationWorldRank = GatewayPair.EchoRank } }, default).AsTask().WaitAsync(Timeout);
        await call.Requests.WriteAsync(GatewayPair.Data(1, 16), default).AsTask().WaitAsync(Timeout);
        Assert.Equal(GatewayPair.Data(1, 16), await call.Responses.ReadAsync(default).AsTask().WaitAsync(Timeout));
    }

    /// <summary>Fails with the status detail and its cause, so an unexpected status says where it came from.</summary>
    private static void AssertStatus(StatusCode expected, RpcException error) =>
        Assert.True(error.StatusCode == expected, $"Expected {expected}, got {error.StatusCode}: {error.Detail} ({error.InnerException})");

    private static async Task<RpcException> CallAsync(RpcChannel channel, IEnumerable<KeyValuePair<string, string>> headers)
    {
        return await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await using var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, headers).WaitAsync(Timeout);
            await call.Requests.WriteAsync(new Frame { Hello = new Hello() }, default).AsTask().WaitAsync(Timeout);
            await call.CompleteRequestsAsync().WaitAsync(Timeout);
            while (await call.Responses.ReadAsync(default).AsTask().WaitAsync(Timeout) is not null) { }
        });
    }
}
