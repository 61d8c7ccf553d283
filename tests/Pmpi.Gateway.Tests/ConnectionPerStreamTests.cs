using System.Globalization;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// Each rank stream rides connections of its own, from rank to gateway, gateway to gateway and gateway to rank, so that
/// its bytes stay opaque end to end and one stream's backlog never holds another's (control calls between the
/// gateways still share their HTTP/2 connection).
/// </summary>
public sealed class ConnectionPerStreamTests
{
    [LinuxFact]
    public async Task Relay_ManyStreamsAtOnce_EachOnAConnectionOfItsOwnBetweenTheGateways()
    {
        // Arrange: 20 streams from 20 "ranks" of domain a, all open at once, each for the echo rank of domain b.
        await using var pair = await GatewayPair.StartAsync();
        var (job, _) = pair.Job("shared-1");
        job.Table.Ranks.Add(Enumerable.Range(3, 20).Select(rank => new RankEntry { Rank = rank, Domain = "a", Node = "a1", Gateway = GatewayPair.Trim(pair.A.Address) }));
        var issued = JobTickets.Create("shared-1", job.Table.Ranks.Count);
        (job.Ticket, job.TicketSignature) = JobTickets.Sign(pair.Member, issued);
        var token = JobTickets.JobToken(pair.Member, issued);
        await pair.RegisterAsync(job);
        int before = EstablishedConnectionsTo(pair.B.Address.Port);
        var calls = new List<RelayedCall>();
        try
        {
            // Act
            for (int rank = 3; rank < 23; rank++)
            {
                var call = await pair.DialAsync("shared-1", token, source: rank);
                calls.Add(call);
                call.Write(GatewayPair.Data(rank, 8));
            }
            foreach (var call in calls) Assert.NotNull(await call.ReadAsync().WaitAsync(GatewayPair.Timeout));

            // Assert: every stream is open and answered, each on a connection of its own from gateway a to gateway b.
            Assert.Equal(20, (await pair.StatusAsync(pair.A)).StreamsOpen);
            Assert.True(EstablishedConnectionsTo(pair.B.Address.Port) - before >= 20, $"{EstablishedConnectionsTo(pair.B.Address.Port) - before} new connections to gateway b for 20 streams");
            // One ends; the others carry on.
            calls[0].Dispose();
            calls[1].Write(GatewayPair.Data(1, 8));
            Assert.Equal(GatewayPair.Data(1, 8), await calls[1].ReadAsync().WaitAsync(GatewayPair.Timeout));
        }
        finally
        {
            foreach (var call in calls) call.Dispose();
        }
    }

    /// <summary>TCP connections of this machine in state ESTABLISHED (01) whose remote port is <paramref name="port"/>.</summary>
    private static int EstablishedConnectionsTo(int port) => File.ReadLines("/proc/net/tcp").Concat(File.ReadLines("/proc/net/tcp6")).Skip(1)
        .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        .Count(columns => columns.Length > 3 && columns[3] == "01" && int.Parse(columns[2].Split(':')[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture) == port);
}
