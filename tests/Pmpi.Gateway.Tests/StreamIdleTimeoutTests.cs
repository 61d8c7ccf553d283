using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// A relayed stream that carries no byte either way for <see cref="GatewayOptions.StreamIdleTimeout"/> is closed by the
/// gateway (the ranks' HTTP/2 pings are bytes too, so a live pair keeps its stream). Shown with a short timeout.
/// </summary>
public sealed class StreamIdleTimeoutTests
{
    private static readonly TimeSpan Idle = TimeSpan.FromSeconds(3);

    [Fact]
    public async Task Connect_IdleShorterThanTheTimeout_StreamCarriesOn()
    {
        await using var pair = await GatewayPair.StartAsync(Idle);
        using var call = await OpenAsync(pair, "idle-1");

        await Task.Delay(Idle / 2);

        call.Write(GatewayPair.Data(1, 16));
        Assert.Equal(GatewayPair.Data(1, 16), await call.ReadAsync().WaitAsync(GatewayPair.Timeout));
    }

    [Fact]
    public async Task Connect_IdleLongerThanTheTimeout_StreamEnds()
    {
        await using var pair = await GatewayPair.StartAsync(Idle);
        using var call = await OpenAsync(pair, "idle-2");

        // Nothing either way for longer than the timeout: the relay cuts the connection, which the reader sees as an error.
        var error = await Assert.ThrowsAnyAsync<Exception>(async () => await call.ReadAsync().WaitAsync(Idle * 4));

        Assert.IsNotType<TimeoutException>(error);
    }

    private static async Task<RelayedCall> OpenAsync(GatewayPair pair, string jobId)
    {
        var (job, token) = pair.Job(jobId);
        await pair.RegisterAsync(job);
        return await pair.DialAsync(jobId, token);
    }
}
