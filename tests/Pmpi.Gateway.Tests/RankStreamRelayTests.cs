using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// Rank streams through two real gateways (domains a and b) to a real rank endpoint, relayed as opaque bytes after a
/// relay preamble: what is relayed, what is refused and with which status, and that a refusal, garbage or a silent
/// connection never stops the gateway.
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
            var status = await WaitForClosedAsync(gateway);
            Assert.Equal(1, status.Jobs);
            Assert.Equal(1, status.StreamsRelayed);
            Assert.True(status.BytesRelayed >= 2 * 3 * (1 << 20), $"{gateway.Address} relayed {status.BytesRelayed} bytes");
        }
    }

    [Fact]
    [Trait("Category", "Slow")]
    public async Task Relay_256Megabytes_ArriveIntactBothWays()
    {
        // Arrange: rank 1's endpoint is a plain TCP echo; the gateways relay whatever bytes the ranks speak.
        using var echo = GatewayPair.StartRawEcho();
        var (job, token) = _pair.Job("relay-big", endpointB: $"http://{echo.LocalEndPoint}");
        await _pair.RegisterAsync(job);
        var (code, reason, socket) = await GatewayPair.OpenRelayAsync(_pair.A, RelayPreamble.For(token, "relay-big", 0, 1).ToBytes());
        using var _ = socket;
        Assert.True(code == StatusCode.OK, reason);
        const int Total = 256 * 1024 * 1024;

        // Act: 256 MB of a fixed pseudo-random sequence out, while reading what comes back.
        var sent = Task.Run(async () =>
        {
            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            var random = new Random(52);
            var chunk = new byte[1 << 20];
            for (int offset = 0; offset < Total; offset += chunk.Length)
            {
                random.NextBytes(chunk);
                hash.AppendData(chunk);
                await socket.SendAsync(chunk);
            }
            socket.Shutdown(SocketShutdown.Send);
            return hash.GetHashAndReset();
        });
        var received = Task.Run(async () =>
        {
            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            var buffer = new byte[1 << 20];
            long total = 0;
            int read;
            while ((read = await socket.ReceiveAsync(buffer)) > 0)
            {
                hash.AppendData(buffer, 0, read);
                total += read;
            }
            return (total, hash.GetHashAndReset());
        });

        // Assert: every byte back, in order, and the end of the stream passed on both ways.
        var sentHash = await sent.WaitAsync(TimeSpan.FromMinutes(3));
        var (count, receivedHash) = await received.WaitAsync(TimeSpan.FromMinutes(3));
        Assert.Equal(Total, count);
        Assert.Equal(sentHash, receivedHash);
        Assert.True((await WaitForClosedAsync(_pair.A)).BytesRelayed >= 2L * Total);
    }

    [Fact]
    public async Task Relay_UnregisteredJob_PermissionDeniedNamingTheJob()
    {
        var (code, reason) = await RefusedAsync(_pair.A, RelayPreamble.For("some key", "never-registered", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, code, reason);
        Assert.Contains("job 'never-registered' is not registered here", reason);
        Assert.Contains("Gateway of domain 'a'", reason);
    }

    [Fact]
    public async Task Relay_ProofUnderAnotherKey_PermissionDenied()
    {
        var (job, _) = _pair.Job("relay-3");
        await _pair.RegisterAsync(job);

        var (code, reason) = await RefusedAsync(_pair.A, RelayPreamble.For("not the job key", "relay-3", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, code, reason);
        Assert.Contains("route proof for rank 0 -> rank 1 does not match", reason);
    }

    [Fact]
    public async Task Relay_AnotherJobsProof_PermissionDenied()
    {
        // Both jobs registered; a rank of job relay-10 holds its own key only, and tries it on job relay-11.
        var (mine, myToken) = _pair.Job("relay-10");
        await _pair.RegisterAsync(mine);
        await _pair.RegisterAsync(_pair.Job("relay-11").Request);

        var (code, reason) = await RefusedAsync(_pair.A, new RelayPreamble("relay-11", 0, 1, RouteProof.Compute(myToken, "relay-10", 0, 1)));

        AssertStatus(StatusCode.PermissionDenied, code, reason);
    }

    [Fact]
    public async Task Relay_ProofForAnotherDestination_PermissionDenied()
    {
        var (job, token) = _pair.Job("relay-4");
        await _pair.RegisterAsync(job);

        var (code, reason) = await RefusedAsync(_pair.A, new RelayPreamble("relay-4", 0, 1, RouteProof.Compute(token, "relay-4", 0, 2)));

        AssertStatus(StatusCode.PermissionDenied, code, reason);
    }

    [Fact]
    public async Task Relay_DestinationBeyondTheTable_NotFound()
    {
        var (job, token) = _pair.Job("relay-12");
        await _pair.RegisterAsync(job);

        var (code, reason) = await RefusedAsync(_pair.A, RelayPreamble.For(token, "relay-12", 0, 7));

        AssertStatus(StatusCode.NotFound, code, reason);
        Assert.Contains("no route from rank 0 to rank 7 (3 ranks)", reason);
    }

    [Fact]
    public async Task Relay_NeitherRankInTheGatewaysDomain_FailedPrecondition()
    {
        var (job, token) = _pair.Job("relay-5");
        await _pair.RegisterAsync(job);

        var (code, reason) = await RefusedAsync(_pair.A, RelayPreamble.For(token, "relay-5", 1, 2));

        AssertStatus(StatusCode.FailedPrecondition, code, reason);
        Assert.Contains("neither rank is in domain 'a'", reason);
    }

    [Fact]
    public async Task Relay_HelloForAnotherRankThanThePreamble_RefusedByTheRankWithItsStatus()
    {
        // The preamble (checked by the gateways) names rank 1; the Hello inside (checked by the rank) names rank 2.
        var (job, token) = _pair.Job("relay-9");
        await _pair.RegisterAsync(job);
        var stream = await GrpcStream.DialThroughAsync(_pair.A.Address, RelayPreamble.For(token, "relay-9", 0, GatewayPair.EchoRank),
            new Uri(GatewayPair.Trim(_pair.Echo.Address)), ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        using var call = new RelayedCall(stream);
        call.Write(new Frame { Hello = new Hello { JobId = "relay-9", JobToken = token, SourceWorldRank = 0, DestinationWorldRank = 2 } });
        stream.Start(call);

        var error = await Assert.ThrowsAsync<RpcException>(async () => await call.ReadAsync().WaitAsync(Timeout));

        AssertStatus(StatusCode.NotFound, error.StatusCode, error.Status.Detail);
        Assert.Contains("not 2", error.Status.Detail);
        Assert.Equal(1, (await _pair.StatusAsync(_pair.B)).StreamsRelayed);
    }

    [Fact]
    public async Task Relay_RemovedJob_PermissionDenied()
    {
        var (job, token) = _pair.Job("relay-7");
        await _pair.RegisterAsync(job);
        using (var master = RpcChannels.For(_pair.A.Address, _pair.Member))
            await new GatewayClient(master).RemoveJobAsync(new RemoveJobRequest { JobId = "relay-7" }).ResponseAsync.WaitAsync(Timeout);

        var (code, reason) = await RefusedAsync(_pair.A, RelayPreamble.For(token, "relay-7", 0, 1));

        AssertStatus(StatusCode.PermissionDenied, code, reason);
        Assert.Equal(0, (await _pair.StatusAsync(_pair.A)).Jobs);
    }

    [Fact]
    public async Task Relay_PeerGatewayDown_UnavailableNamingTheRanksDomainsAndHop()
    {
        var (job, token) = _pair.Job("relay-8");
        await _pair.RegisterAsync(job);
        var b = GatewayPair.Trim(_pair.B.Address);
        await _pair.StopBAsync();

        var error = await Assert.ThrowsAsync<RpcException>(() => _pair.DialAsync("relay-8", token));

        AssertStatus(StatusCode.Unavailable, error.StatusCode, error.Status.Detail);
        Assert.Contains("rank 0 (domain 'a') -> rank 1 (domain 'b')", error.Status.Detail);
        Assert.Contains($"the gateway of domain 'b' at {b}", error.Status.Detail);
    }

    [Fact]
    public async Task Relay_PeerGatewayStoppedMidStream_TheRanksConnectionBreaks()
    {
        var (job, token) = _pair.Job("relay-13");
        await _pair.RegisterAsync(job);
        using var call = await _pair.DialAsync("relay-13", token);
        call.Write(GatewayPair.Data(1, 16));
        Assert.Equal(GatewayPair.Data(1, 16), await call.ReadAsync().WaitAsync(Timeout));

        await _pair.StopBAsync();

        // The call fails (not a clean end) well before any ping would have noticed.
        await Assert.ThrowsAsync<RpcException>(async () => await call.ReadAsync().WaitAsync(Timeout));
    }

    [Theory]
    [InlineData("504D5049524C5931FFFF")] // the magic, then a body longer than any preamble's
    [InlineData("504D5049524C5931000B0041414141414141414141")] // an empty job id
    [InlineData("504D5858")] // "PMXX": not the magic after all
    public async Task Relay_MalformedPreamble_InvalidArgumentAndTheGatewayServesOn(string hex)
    {
        var bytes = Convert.FromHexString(hex);
        var (job, token) = _pair.Job("relay-2");
        await _pair.RegisterAsync(job);

        var (code, reason, socket) = await GatewayPair.OpenRelayAsync(_pair.A, bytes);
        socket.Dispose();

        AssertStatus(StatusCode.InvalidArgument, code, reason);
        Assert.Equal(1, (await _pair.StatusAsync(_pair.A)).StreamsRefused);
        await _pair.EchoFromRankZeroAsync("relay-2", token);
    }

    [Fact]
    public async Task Relay_GarbageAndSilentConnections_ClosedWhileTheGatewayServesOn()
    {
        // Arrange: a short preamble timeout, so the silent connections are cut within the test.
        await using var pair = await GatewayPair.StartAsync(configure: options => (options.PreambleTimeout, options.MaxPendingConnections) = (TimeSpan.FromSeconds(2), 16));
        var (job, token) = pair.Job("relay-14");
        await pair.RegisterAsync(job);
        var held = new List<Socket>();
        try
        {
            // Act: a preamble that stops half-way, and more silent connections from one address than its share of the
            // pending ones.
            var garbage = await ConnectAsync(pair.A);
            held.Add(garbage);
            await garbage.SendAsync(new byte[] { 0x50, 0x4d, 0x50, 0x49, 0x52, 0x4c, 0x59, 0x31, 0x00, 0x05, 0x01 });
            for (int i = 0; i < 12; i++) held.Add(await ConnectAsync(pair.A));

            // Assert: the gateway closes every one of them (the silent ones once the timeout passed, those beyond the
            // address's share at once), and relays a job afterwards.
            foreach (var socket in held)
            {
                var buffer = new byte[RelayReply.MaxReasonLength + 3];
                var closed = Task.Run(async () =>
                {
                    try
                    {
                        while (await socket.ReceiveAsync(buffer) > 0) { }
                    }
                    catch (SocketException)
                    {
                    }
                });
                await closed.WaitAsync(Timeout);
            }
            await pair.EchoFromRankZeroAsync("relay-14", token);
        }
        finally
        {
            foreach (var socket in held) socket.Dispose();
        }
    }

    [Fact]
    public async Task RegisterJob_WithoutClusterCertificate_Unauthenticated()
    {
        var (job, _) = _pair.Job("register-1");
        using var channel = _pair.RankChannel(_pair.A);

        var error = await Assert.ThrowsAsync<RpcException>(() => new GatewayClient(channel).RegisterJobAsync(job).ResponseAsync.WaitAsync(Timeout));

        AssertStatus(StatusCode.Unauthenticated, error);
    }

    [Fact]
    public async Task RegisterJob_TicketSignedWithAnotherKey_PermissionDenied()
    {
        var (job, _) = _pair.Job("register-2");
        job.TicketSignature = Google.Protobuf.ByteString.CopyFrom(new byte[32]);
        using var channel = RpcChannels.For(_pair.A.Address, _pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => new GatewayClient(channel).RegisterJobAsync(job).ResponseAsync.WaitAsync(Timeout));

        AssertStatus(StatusCode.PermissionDenied, error);
        Assert.Contains("signature", error.Status.Detail);
    }

    [Fact]
    public async Task RegisterJob_NoRankInTheDomain_FailedPrecondition()
    {
        var (job, _) = _pair.Job("register-3");
        foreach (var entry in job.Table.Ranks) entry.Domain = "elsewhere";
        using var channel = RpcChannels.For(_pair.A.Address, _pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => new GatewayClient(channel).RegisterJobAsync(job).ResponseAsync.WaitAsync(Timeout));

        AssertStatus(StatusCode.FailedPrecondition, error);
    }

    [Fact]
    public async Task RegisterJob_BeyondMaxJobs_ResourceExhaustedAndTheRegisteredOnesStillRelay()
    {
        await using var pair = await GatewayPair.StartAsync(maxJobs: 2);
        var (first, token) = pair.Job("bounded-1");
        await pair.RegisterAsync(first);
        await pair.RegisterAsync(pair.Job("bounded-2").Request);
        using var master = RpcChannels.For(pair.A.Address, pair.Member);

        var error = await Assert.ThrowsAsync<RpcException>(() => new GatewayClient(master).RegisterJobAsync(pair.Job("bounded-3").Request).ResponseAsync.WaitAsync(Timeout));

        AssertStatus(StatusCode.ResourceExhausted, error);
        Assert.Contains("GatewayOptions.MaxJobs", error.Status.Detail);
        // A registered job renews its table, and streams for it are still relayed.
        await new GatewayClient(master).RegisterJobAsync(first).ResponseAsync.WaitAsync(Timeout);
        using var call = await pair.DialAsync("bounded-1", token);
        call.Write(GatewayPair.Data(1, 16));
        Assert.Equal(GatewayPair.Data(1, 16), await call.ReadAsync().WaitAsync(Timeout));
    }

    /// <summary>Fails with the status detail, so an unexpected status says where it came from.</summary>
    private static void AssertStatus(StatusCode expected, StatusCode code, string reason) =>
        Assert.True(code == expected, $"Expected {expected}, got {code}: {reason}");

    private static void AssertStatus(StatusCode expected, RpcException error) =>
        Assert.True(error.StatusCode == expected, $"Expected {expected}, got {error.StatusCode}: {error.Status.Detail} ({error.InnerException})");

    /// <summary>Sends <paramref name="preamble"/> to <paramref name="gateway"/>; its refusal, after which it must close the connection.</summary>
    private static async Task<(StatusCode Code, string Reason)> RefusedAsync(GatewayHost gateway, RelayPreamble preamble)
    {
        var (code, reason, socket) = await GatewayPair.OpenRelayAsync(gateway, preamble.ToBytes());
        using (socket) Assert.Equal(0, await socket.ReceiveAsync(new byte[1]).WaitAsync(Timeout));
        return (code, reason);
    }

    private static async Task<Socket> ConnectAsync(GatewayHost gateway)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, gateway.Address.Port).WaitAsync(Timeout);
        return socket;
    }

    /// <summary>The gateway's counters once no stream is open any more (a relay ends a moment after its ranks).</summary>
    private async Task<GatewayStatus> WaitForClosedAsync(GatewayHost gateway)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (true)
        {
            var status = await _pair.StatusAsync(gateway);
            if (status.StreamsOpen == 0) return status;
            Assert.True(DateTime.UtcNow < deadline, $"{gateway.Address} still relays {status.StreamsOpen} streams after {Timeout}.");
            await Task.Delay(50);
        }
    }
}
