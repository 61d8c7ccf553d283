using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Kestrel;

/// <summary>
/// A listener bounds what callers that make no call can hold: connections per remote address, connections that
/// send nothing, and connections that send their headers too slowly (slow loris).
/// </summary>
public sealed class ConnectionLimitTests : IAsyncLifetime
{
    private static readonly RpcServerLimits Limits = new()
    {
        IdleTimeout = TimeSpan.FromSeconds(2),
        HeadersTimeout = TimeSpan.FromSeconds(2),
    };

    /// <summary>A second loopback address (Linux routes all of 127/8 to lo), so one test host can be two callers.</summary>
    private static readonly IPAddress OtherCaller = IPAddress.Parse("127.0.0.2");

    /// <summary>The longest a cut may take: the timeout, Kestrel's 1 s heartbeat, and room for a loaded machine.</summary>
    private static readonly TimeSpan CutWithin = TimeSpan.FromSeconds(10);

    private RpcServer _server = null!;

    public async Task InitializeAsync() => _server = await StartAsync(Limits);

    public async Task DisposeAsync() => await _server.DisposeAsync();

    [LinuxFact]
    public async Task Connect_MoreThanPerAddressLimit_ExcessClosedAndOtherAddressesServed()
    {
        // Arrange: a server whose idle timeout is far off, and the limit's worth of connections from one address,
        // each admitted (answered with the server's SETTINGS) before the next: the server admits connections on
        // thread-pool threads, so connections opened at once may be counted in any order.
        await using var server = await StartAsync(new RpcServerLimits { MaxConnectionsPerAddress = 3 });
        var held = new List<Socket>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                held.Add(await ConnectAsync(server, OtherCaller));
                Assert.True(await SlowLoris.OpenAsync(held[^1], TestServer.Timeout), $"Connection {i + 1} of 3 within the limit was not answered.");
            }

            // Act
            bool excessClosed;
            try
            {
                using var excess = await ConnectAsync(server, OtherCaller);
                excessClosed = await SlowLoris.ClosedWithinAsync(excess, TimeSpan.FromSeconds(5));
            }
            catch (SocketException)
            {
                excessClosed = true; // reset before the connect was even reported
            }
            bool heldClosed = false;
            foreach (var socket in held) heldClosed |= await SlowLoris.ClosedWithinAsync(socket, TimeSpan.FromMilliseconds(100));
            var node = await CallAsync(server);

            // Assert
            Assert.True(excessClosed, "A connection past the per-address limit was kept open.");
            Assert.False(heldClosed, "A connection within the limit was closed.");
            Assert.Equal("limited", node.NodeName);
        }
        finally
        {
            foreach (var socket in held) socket.Dispose();
        }
    }

    [LinuxFact]
    public async Task Connect_SendsNothing_ClosedAfterIdleTimeout()
    {
        // Arrange
        using var socket = await ConnectAsync(IPAddress.Loopback);

        // Act
        var clock = Stopwatch.StartNew();
        bool closed = await SlowLoris.ClosedWithinAsync(socket, CutWithin);

        // Assert
        Assert.True(closed, $"A connection that sent nothing was still open after {CutWithin.TotalSeconds} s.");
        Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(1), $"The connection was closed after {clock.Elapsed.TotalSeconds:F1} s, before its idle timeout.");
    }

    [LinuxFact]
    public async Task Connect_DripsRequestHeaders_ClosedAfterHeadersTimeout()
    {
        // Act
        var cut = await SlowLoris.DripUntilClosedAsync(_server.Address.Port, CutWithin);

        // Assert
        Assert.True(cut is not null, $"A connection dripping its headers was still open after {CutWithin.TotalSeconds} s.");
    }

    private static async Task<RpcServer> StartAsync(RpcServerLimits limits) =>
        await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<LimitedAgent>(), limits: limits).WaitAsync(TestServer.Timeout);

    private Task<Socket> ConnectAsync(IPAddress from) => ConnectAsync(_server, from);

    private static async Task<Socket> ConnectAsync(RpcServer server, IPAddress from)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(from, 0));
        await socket.ConnectAsync(IPAddress.Loopback, server.Address.Port).WaitAsync(TestServer.Timeout);
        return socket;
    }

    private static async Task<NodeInfo> CallAsync(RpcServer server)
    {
        using var channel = RpcChannels.For(server.Address);
        return await new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow + TestServer.Timeout).ResponseAsync.WaitAsync(TestServer.Timeout);
    }

    private sealed class LimitedAgent : Agent.AgentBase
    {
        public override Task<NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context) => Task.FromResult(new NodeInfo { NodeName = "limited" });
    }
}
