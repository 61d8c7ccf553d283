using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// YARP ends a forwarded call that carries nothing for its activity timeout, and HTTP/2 pings do not reset it: the
/// gateway sets its own (<see cref="GatewayOptions.StreamIdleTimeout"/>) on every relayed call. Shown with a short one.
/// </summary>
public sealed class StreamIdleTimeoutTests
{
    private static readonly TimeSpan Idle = TimeSpan.FromSeconds(3);

    [Fact]
    public async Task Connect_IdleShorterThanTheTimeout_StreamCarriesOn()
    {
        await using var pair = await GatewayPair.StartAsync(Idle);
        await using var call = await OpenAsync(pair, "idle-1");

        await Task.Delay(Idle / 2);

        await call.Requests.WriteAsync(GatewayPair.Data(1, 16), default).AsTask().WaitAsync(GatewayPair.Timeout);
        Assert.Equal(GatewayPair.Data(1, 16), await call.Responses.ReadAsync(default).AsTask().WaitAsync(GatewayPair.Timeout));
    }

    [Fact]
    public async Task Connect_IdleLongerThanTheTimeout_StreamEnds()
    {
        await using var pair = await GatewayPair.StartAsync(Idle);
        await using var call = await OpenAsync(pair, "idle-2");

        // Nothing either way for longer than the timeout: the relay cuts the call, which the reader sees as an error.
        var error = await Assert.ThrowsAnyAsync<Exception>(async () => await call.Responses.ReadAsync(default).AsTask().WaitAsync(Idle * 4));

        Assert.IsNotType<TimeoutException>(error);
    }

    private static async Task<Rpc.Client.DuplexCall<Frame, Frame>> OpenAsync(GatewayPair pair, string jobId)
    {
        var (job, token) = pair.Job(jobId);
        await pair.RegisterAsync(job);
        var channel = pair.RankChannel(pair.A);
        var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, RouteProof.Headers(token, jobId, 0, GatewayPair.EchoRank)).WaitAsync(GatewayPair.Timeout);
        await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = jobId, JobToken = token, SourceWorldRank = 0, DestinationWorldRank = GatewayPair.EchoRank } }, default).AsTask().WaitAsync(GatewayPair.Timeout);
        return call;
    }
}
