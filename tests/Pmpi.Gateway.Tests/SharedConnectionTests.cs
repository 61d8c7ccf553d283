using System.Globalization;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>Rank streams between two domains share the gateways' HTTP/2 connection rather than opening one each.</summary>
public sealed class SharedConnectionTests
{
    [LinuxFact]
    public async Task Connect_ManyStreamsAtOnce_RideOneConnectionBetweenTheGateways()
    {
        // Arrange: 20 streams from 20 "ranks" of domain a, all open at once, each for the echo rank of domain b.
        await using var pair = await GatewayPair.StartAsync();
        var (job, token) = pair.Job("shared-1");
        job.Table.Ranks.Add(Enumerable.Range(3, 20).Select(rank => new RankEntry { Rank = rank, Domain = "a", Node = "a1", Gateway = GatewayPair.Trim(pair.A.Address) }));
        var issued = JobTickets.Create("shared-1", job.Table.Ranks.Count);
        (job.Ticket, job.TicketSignature) = JobTickets.Sign(pair.Member, issued);
        token = JobTickets.JobToken(pair.Member, issued);
        await pair.RegisterAsync(job);
        var calls = new List<(RpcChannel Channel, DuplexCall<Frame, Frame> Call)>();
        try
        {
            // Act
            for (int rank = 3; rank < 23; rank++)
            {
                var channel = pair.RankChannel(pair.A);
                var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, RouteProof.Headers(token, "shared-1", rank, GatewayPair.EchoRank)).WaitAsync(GatewayPair.Timeout);
                calls.Add((channel, call));
                await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = "shared-1", JobToken = token, SourceWorldRank = rank, DestinationWorldRank = GatewayPair.EchoRank } }, default).AsTask().WaitAsync(GatewayPair.Timeout);
                await call.Requests.WriteAsync(GatewayPair.Data(rank, 8), default).AsTask().WaitAsync(GatewayPair.Timeout);
            }
            foreach (var (_, call) in calls) Assert.NotNull(await call.Responses.ReadAsync(default).AsTask().WaitAsync(GatewayPair.Timeout));

            // Assert: every stream is open and answered; gateway a holds one connection to gateway b.
            Assert.Equal(20, (await pair.StatusAsync(pair.A)).StreamsOpen);
            Assert.Equal(1, EstablishedConnectionsTo(pair.B.Address.Port));
        }
        finally
        {
            foreach (var (channel, call) in calls)
            {
                await call.DisposeAsync();
                channel.Dispose();
            }
        }
    }

    /// <summary>TCP connections of this machine in state ESTABLISHED (01) whose remote port is <paramref name="port"/>.</summary>
    private static int EstablishedConnectionsTo(int port) => File.ReadLines("/proc/net/tcp").Concat(File.ReadLines("/proc/net/tcp6")).Skip(1)
        .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        .Count(columns => columns.Length > 3 && columns[3] == "01" && int.Parse(columns[2].Split(':')[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture) == port);
}
