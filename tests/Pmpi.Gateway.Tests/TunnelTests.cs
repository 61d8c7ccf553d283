using System.Net;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// A gateway that dials out (<see cref="GatewayOptions.DialOut"/>): gateway b parks calls at gateway a, and the job
/// names b's gateway at an address where nothing listens, so whatever a relays to domain b can only ride those calls.
/// </summary>
public sealed class TunnelTests
{
    private static readonly TimeSpan Timeout = GatewayPair.Timeout;

    [Fact]
    public async Task StreamsAndControlCallsForADomainWhoseGatewayDialsOut_RideTheCallsItParked()
    {
        await using var pair = await GatewayPair.StartAsync(bDialsOut: true);
        await WaitForTunnelsAsync(pair, 1);
        var (job, token) = pair.Job("tunnel-1");
        foreach (var entry in job.Table.Ranks.Where(entry => entry.Domain == "b")) entry.Gateway = "https://127.0.0.1:1";
        // The master registers the job with b's gateway through a's, which reaches b only inside b's call.
        await pair.RegisterFromMasterInAAsync("tunnel-1", job);
        // A rank of a streams 3 MB to the echo rank of b and gets them back.
        await pair.EchoFromRankZeroAsync("tunnel-1", token);

        var b = await pair.StatusAsync(pair.B);
        Assert.Equal((1, 1L), (b.Jobs, b.StreamsRelayed));
        Assert.True(b.BytesRelayed >= 2 * 3 * (1 << 20), $"b relayed {b.BytesRelayed} bytes");
        // One call carries the connection; b parked the next one at once.
        var a = await pair.StatusAsync(pair.A);
        Assert.Equal((1L, 1L), (a.ControlCallsRelayed, a.StreamsRelayed));
        await WaitForTunnelsAsync(pair, 2);
    }

    [Fact]
    public async Task StreamsThatEndedInsideParkedCalls_LeaveTheNextCallsOnTheDialersConnectionTheirBodies()
    {
        // Kestrel hands a finished call's bodies to the next call on its connection: a relayed stream that ended inside
        // one of b's calls must leave nothing reading them, or the streams and calls that come next on b's connection fail.
        await using var pair = await GatewayPair.StartAsync(bDialsOut: true);
        await WaitForTunnelsAsync(pair, 1);
        var (job, token) = pair.Job("tunnel-2");
        foreach (var entry in job.Table.Ranks.Where(entry => entry.Domain == "b")) entry.Gateway = "https://127.0.0.1:1";
        await pair.RegisterFromMasterInAAsync("tunnel-2", job);

        for (int stream = 0; stream < 4; stream++) await pair.EchoFromRankZeroAsync("tunnel-2", token);

        var a = await pair.StatusAsync(pair.A);
        var b = await pair.StatusAsync(pair.B);
        Assert.Equal((4L, 4L), (a.StreamsRelayed, b.StreamsRelayed));
    }

    [Fact]
    public async Task Tunnel_WithoutClusterCertificate_RefusedAndNothingParked()
    {
        await using var pair = await GatewayPair.StartAsync();
        using var handler = new SocketsHttpHandler();
        handler.SslOptions.RemoteCertificateValidationCallback = (_, _, _, _) => true;
        using var client = new HttpMessageInvoker(handler);
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(pair.A.Address, "/pmpi/v1/tunnel"))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = new ByteArrayContent([]),
        };
        request.Headers.Add("pmpi-tunnel-domain", "b");

        using var response = await client.SendAsync(request, default).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal(0, (await pair.StatusAsync(pair.A)).TunnelsOpen);
    }

    /// <summary>Waits until gateway a holds at least <paramref name="count"/> of b's calls.</summary>
    private static async Task WaitForTunnelsAsync(GatewayPair pair, int count)
    {
        var deadline = DateTime.UtcNow + Timeout;
        int open;
        while ((open = (await pair.StatusAsync(pair.A)).TunnelsOpen) < count)
        {
            Assert.True(DateTime.UtcNow < deadline, $"Gateway a holds {open} of b's calls, not {count}, after {Timeout}.");
            await Task.Delay(50);
        }
    }
}
