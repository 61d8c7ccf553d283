using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// A job whose ranks spawn a world: the master registers it again with the world's ticket and the table grown by its
/// ranks, and the gateways route to them from then on. What makes such a registration refused.
/// </summary>
public sealed class SpawnedWorldTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = GatewayPair.Timeout;
    private GatewayPair _pair = null!;

    public async Task InitializeAsync() => _pair = await GatewayPair.StartAsync();

    public async Task DisposeAsync() => await _pair.DisposeAsync();

    [Fact]
    public async Task RegisterJob_WithASpawnedWorldsTicket_RoutesToItsRanks()
    {
        // Arrange: the job's 3 ranks, then a world of one rank (job rank 3, domain b) that has not registered yet.
        var (job, token) = _pair.Job("spawned-1");
        await _pair.RegisterAsync(job);
        var before = await Assert.ThrowsAsync<RpcException>(() => _pair.DialAsync("spawned-1", token, destination: 3));

        // Act
        await _pair.RegisterAsync(WithSpawnedWorld(job, Spawned(job)));

        // Assert: before, rank 3 was unknown; now gateway b knows it and only lacks its endpoint.
        Assert.True(before.StatusCode == StatusCode.NotFound, $"{before.StatusCode}: {before.Status.Detail}");
        var after = await Assert.ThrowsAsync<RpcException>(() => _pair.DialAsync("spawned-1", token, destination: 3));
        Assert.True(after.StatusCode == StatusCode.Unavailable, $"{after.StatusCode}: {after.Status.Detail}");
        Assert.Contains("rank 3 has not registered its endpoint with this gateway", after.Status.Detail);
    }

    public static TheoryData<string, StatusCode, string> Refusals => new()
    {
        { "altered", StatusCode.PermissionDenied, "signature is not this cluster's" },
        { "another job", StatusCode.InvalidArgument, "is of another job (its id or nonce differs)" },
        { "not next", StatusCode.InvalidArgument, "4 ranks from rank 4; the job's next world starts at rank 3" },
        { "expired", StatusCode.PermissionDenied, "expired" },
        { "table short", StatusCode.InvalidArgument, "has 3 entries for 4 ranks" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task RegisterJob_SpawnedWorldTicketThatDoesNotFit_RefusedAndTheJobRelaysAsBefore(string fault, StatusCode expected, string detail)
    {
        // Arrange
        var (job, token) = _pair.Job("spawned-2");
        await _pair.RegisterAsync(job);
        var parsed = JobTicket.Parser.ParseFrom(job.Ticket);
        var world = fault switch
        {
            "another job" => JobTickets.CreateSpawned(JobTickets.Create("spawned-2", 3), 3, 1), // same id, another nonce
            "not next" => JobTickets.CreateSpawned(parsed, 4, 4),
            "expired" => Expired(JobTickets.CreateSpawned(parsed, 3, 1)),
            _ => JobTickets.CreateSpawned(parsed, 3, 1),
        };
        var (ticket, signature) = JobTickets.Sign(_pair.Member, world);
        if (fault == "altered") signature = ByteString.CopyFrom(new byte[32]);
        var request = WithSpawnedWorld(job, new SignedTicket { Ticket = ticket, Signature = signature }, addRank: fault != "table short");
        using var master = RpcChannels.For(_pair.A.Address, _pair.Member);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => new GatewayClient(master).RegisterJobAsync(request).ResponseAsync.WaitAsync(Timeout));

        // Assert
        Assert.True(error.StatusCode == expected, $"{error.StatusCode}: {error.Status.Detail}");
        Assert.Contains(detail, error.Status.Detail);
        await _pair.EchoFromRankZeroAsync("spawned-2", token);
    }

    [Fact]
    public async Task RegisterJob_SpawnedWorldTicketExpiredSinceItWasRegistered_StillAccepted()
    {
        // Arrange: a world's ticket that expires a second after it is registered, as every ticket does in time (a
        // later spawn's registration repeats it).
        var (job, _) = _pair.Job("spawned-3");
        await _pair.RegisterAsync(job);
        var world = JobTickets.CreateSpawned(JobTicket.Parser.ParseFrom(job.Ticket), 3, 1);
        world.ExpiresUnixMs = DateTimeOffset.UtcNow.AddSeconds(1).ToUnixTimeMilliseconds();
        var (ticket, signature) = JobTickets.Sign(_pair.Member, world);
        var request = WithSpawnedWorld(job, new SignedTicket { Ticket = ticket, Signature = signature });
        await _pair.RegisterAsync(request);
        await Task.Delay(TimeSpan.FromSeconds(1.5));

        // Act, Assert: registered again, with its endpoint now, it is accepted.
        request.Table.Ranks[3].Endpoint = "http://127.0.0.1:1";
        await _pair.RegisterAsync(request);
    }

    /// <summary>A valid ticket for a world of one rank spawned in <paramref name="job"/>.</summary>
    private SignedTicket Spawned(RegisterJobRequest job)
    {
        var (ticket, signature) = JobTickets.Sign(_pair.Member, JobTickets.CreateSpawned(JobTicket.Parser.ParseFrom(job.Ticket), 3, 1));
        return new SignedTicket { Ticket = ticket, Signature = signature };
    }

    /// <summary><paramref name="job"/>'s registration with <paramref name="world"/>'s ticket and (unless not) its rank 3 in domain b, without an endpoint.</summary>
    private static RegisterJobRequest WithSpawnedWorld(RegisterJobRequest job, SignedTicket world, bool addRank = true)
    {
        var request = job.Clone();
        request.Spawned.Add(world);
        if (addRank) request.Table.Ranks.Add(new RankEntry { Rank = 3, Domain = "b", Node = "b1", Gateway = request.Table.Ranks[1].Gateway });
        return request;
    }

    private static JobTicket Expired(JobTicket ticket)
    {
        ticket.ExpiresUnixMs = DateTimeOffset.UtcNow.AddMinutes(-1).ToUnixTimeMilliseconds();
        return ticket;
    }
}
