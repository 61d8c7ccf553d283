using System.Net;
using System.Net.Sockets;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// An agent flooded with idle connections keeps its descriptors, sheds or refuses the excess and serves other callers, and
/// members calling from the flood's own address.
/// </summary>
public sealed class ConnectionFloodTests
{
    private const int Connections = 5000;
    private const int OpenFileLimit = 4096;

    /// <summary>The flood's source: a second loopback address (Linux routes all of 127/8 to lo), apart from the legitimate caller's 127.0.0.1.</summary>
    private static readonly IPAddress Attacker = IPAddress.Parse("127.0.0.2");

    [LinuxFact]
    public async Task Agent_5000IdleConnectionsUnderOpenFileLimit4096_HoldsAtMostTheLimitAndKeepsServing()
    {
        // Arrange
        await using var agent = await AgentProcess.StartAsync("flooded", slots: 1, launcher: ["prlimit", $"--nofile={OpenFileLimit}:{OpenFileLimit}"]);
        Assert.Contains(File.ReadLines($"/proc/{agent.Process.Id}/limits"), line => line.StartsWith("Max open files", StringComparison.Ordinal) && line.Contains($" {OpenFileLimit} ", StringComparison.Ordinal));
        var sockets = new List<Socket>();
        try
        {
            // Act: 5,000 connections that never send a byte, 100 at a time.
            int failed = 0;
            for (int batch = 0; batch < Connections; batch += 100)
            {
                var attempts = Enumerable.Range(0, 100).Select(_ => TryConnectAsync(agent.Port)).ToArray();
                foreach (var socket in await Task.WhenAll(attempts))
                {
                    if (socket is null) failed++;
                    else sockets.Add(socket);
                }
            }
            var node = await PmpiCli.GetNodeInfoAsync(agent.Address);
            var open = await Task.WhenAll(sockets.Select(socket => StillOpenAsync(socket)));
            int held = open.Count(stillOpen => stillOpen);

            // Assert
            Assert.False(agent.Process.HasExited, $"The agent died under the flood.\n{agent.Process.Transcript}");
            Assert.True(node.Slots == 1, "GetNodeInfo did not answer for the agent.");
            Assert.True(held <= 1024, $"One address holds {held} connections of {Connections} ({failed} failed to connect); the per-address limit is 1,024.");
            // Idle connections are closed 10 s after they connect (RpcServerLimits.AuthenticationTimeout), so a slow
            // flood may hold none by now: the agent's log shows it reached the cap.
            await agent.Process.WaitForLineAsync(line => line.Contains("Closed the unauthenticated connection from 127.0.0.2:", StringComparison.Ordinal), PmpiCli.Timeout,
                "the flood reaching the per-address limit");
        }
        finally
        {
            foreach (var socket in sockets) socket.Dispose();
        }
    }

    [LinuxFact]
    public async Task Agent_IdleFloodFromTheMembersOwnAddress_MemberStillAnswered()
    {
        // Arrange: an agent, and more idle connections from 127.0.0.1 than that address may hold, as a local user
        // without the credential (or every host behind one NAT) can open.
        await using var agent = await AgentProcess.StartAsync("flooded-address", slots: 1);
        var sockets = new List<Socket>();
        try
        {
            for (int batch = 0; batch < 1200; batch += 100)
                foreach (var socket in await Task.WhenAll(Enumerable.Range(0, 100).Select(_ => TryConnectAsync(agent.Port, IPAddress.Loopback))))
                    if (socket is not null) sockets.Add(socket);

            // Act: a cluster member calls from the same address.
            var node = await PmpiCli.GetNodeInfoAsync(agent.Address);

            // Assert: answered, and the sheds that made room were logged a line at a time, not one per connection.
            Assert.Equal(1, node.Slots);
            await agent.Process.WaitForLineAsync(line => line.Contains("Closed the unauthenticated connection from 127.0.0.1:", StringComparison.Ordinal), PmpiCli.Timeout,
                "the shed of an unauthenticated connection");
            Assert.True(agent.Process.Stderr.Count(line => line.Contains("Closed the unauthenticated connection", StringComparison.Ordinal)) <= 2,
                $"Every shed connection was logged.\n{agent.Process.Transcript}");
        }
        finally
        {
            foreach (var socket in sockets) socket.Dispose();
        }
    }

    [LinuxFact]
    public async Task Agent_SlowLorisHeaders_CutWithinItsHeadersTimeout()
    {
        // Arrange: an agent with its default limits (headers within 10 s).
        await using var agent = await AgentProcess.StartAsync("slow-loris", slots: 1);

        // Act
        var cut = await SlowLoris.DripUntilClosedAsync(agent.Port, TimeSpan.FromSeconds(25));

        // Assert
        Assert.True(cut is not null, "The agent kept a connection that dripped its headers for 25 s.");
        Assert.False(agent.Process.HasExited, $"The agent died.\n{agent.Process.Transcript}");
        Assert.Equal(1, (await PmpiCli.GetNodeInfoAsync(agent.Address)).Slots);
    }

    private static async Task<Socket?> TryConnectAsync(int port, IPAddress? from = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(from ?? Attacker, 0));
            await socket.ConnectAsync(IPAddress.Loopback, port).WaitAsync(TimeSpan.FromSeconds(5));
            return socket;
        }
        catch (Exception e) when (e is SocketException or TimeoutException)
        {
            socket.Dispose();
            return null;
        }
    }

    /// <summary>Whether the agent left the connection open for another second (an end of stream or a reset means it closed it).</summary>
    private static async Task<bool> StillOpenAsync(Socket socket)
    {
        var buffer = new byte[1024];
        using var wait = new CancellationTokenSource(TimeSpan.FromSeconds(1));
        try
        {
            while (true)
            {
                if (await socket.ReceiveAsync(buffer, SocketFlags.None, wait.Token) == 0) return false;
            }
        }
        catch (OperationCanceledException)
        {
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
