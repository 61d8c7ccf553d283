using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Integration.Tests.Security;

/// <summary>
/// A cluster member still launches only what a valid ticket allows: a real agent refuses a ticket that is expired,
/// altered, signed with another key, for another agent or other ranks, or already used, and runs nothing.
/// </summary>
[Trait("Category", "Security")]
public sealed class TicketTests(SecurityFixture fixture) : IClassFixture<SecurityFixture>
{
    public static TheoryData<string, string> BadTickets => new()
    {
        { "expired", "expired" },
        { "altered", "not this cluster's" },
        { "foreign key", "not this cluster's" },
        { "another agent", "does not name this agent" },
        { "another rank", "does not give rank 0" },
        { "another job", "the ticket is for job" },
    };

    [Theory]
    [MemberData(nameof(BadTickets))]
    public async Task Launch_BadTicket_PermissionDeniedAndNothingRuns(string what, string reason)
    {
        // Arrange
        var marker = fixture.NewMarker();
        var jobId = $"ticket-{Guid.NewGuid():N}";
        var member = TestCluster.Security;
        var request = what switch
        {
            "expired" => fixture.MarkerLaunch(jobId, marker, member, ticket => ticket.ExpiresUnixMs = DateTimeOffset.UtcNow.AddSeconds(-1).ToUnixTimeMilliseconds()),
            "altered" => SecurityFixture.Altered(fixture.MarkerLaunch(jobId, marker, member)),
            "foreign key" => fixture.MarkerLaunch(jobId, marker, RpcSecurity.MutualTls(fixture.Foreign)),
            "another agent" => fixture.MarkerLaunch(jobId, marker, member, ticket => ticket.Agents[0].Agent = "127.0.0.1:1"),
            "another rank" => fixture.MarkerLaunch(jobId, marker, member, ticket => ticket.Agents[0].Ranks[0] = 1),
            _ => fixture.MarkerLaunch(jobId, marker, member, ticket => ticket.JobId = "some-other-job"),
        };
        using var channel = RpcChannels.For(fixture.Agent.Address, member);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => LaunchToEndAsync(channel, request)).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Contains(reason, error.Status.Detail, StringComparison.Ordinal);
        Assert.False(File.Exists(marker), $"a launch with a bad ticket ({what}) ran the marker program");
    }

    [Fact]
    public async Task Launch_ReplayedTicket_PermissionDeniedAndRanOnlyOnce()
    {
        // Arrange: a valid launch runs the marker once (the rank then fails to reach the made-up master, which is fine).
        var marker = fixture.NewMarker();
        var request = fixture.MarkerLaunch($"replay-{Guid.NewGuid():N}", marker, TestCluster.Security);
        using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);
        await LaunchToEndAsync(channel, request).WaitAsync(PmpiCli.Timeout);
        Assert.True(File.Exists(marker), "the first, valid launch did not run the marker program");
        File.Delete(marker);

        // Act: the same request again, as someone who captured it would send it.
        var error = await Assert.ThrowsAsync<RpcException>(() => LaunchToEndAsync(channel, request)).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Contains("already used", error.Status.Detail, StringComparison.Ordinal);
        Assert.False(File.Exists(marker), "the replayed launch ran the marker program again");
    }

    private static async Task LaunchToEndAsync(GrpcChannel channel, LaunchRequest request)
    {
        using var call = new AgentClient(channel).Launch(request, deadline: DateTime.UtcNow.AddSeconds(45));
        await call.ResponseStream.ReadToEndAsync(PmpiCli.Timeout);
    }
}
