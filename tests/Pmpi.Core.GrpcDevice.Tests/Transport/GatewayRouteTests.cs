using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
// Pmpi.Status is an MPI status; this is a call's.
using RpcStatus = Grpc.Core.Status;

namespace Pmpi.Tests.Transport;

/// <summary>
/// A peer in another domain is reached through the sender's domain's gateway, on the same gRPC link code with another
/// target: the connection opens at the gateway with a relay preamble naming the destination rank, and then carries
/// what a direct dial would. Here a relay standing in for the gateway pair reads the preamble and copies the bytes to
/// the rank it names, so the device is tested alone; the real gateways (src/Pmpi.Gateway) are tested in
/// Pmpi.Gateway.Tests and, between real processes, in Pmpi.Integration.Tests.
/// </summary>
public sealed class GatewayRouteTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Send_PeerInAnotherDomain_OpensTheStreamAtOwnGatewayNamingTheDestination()
    {
        // Arrange
        LoopbackGrpcJob? job = null;
        await using var relay = Relay.Start(rank => job!.EndpointOf(rank));
        using var _ = job = new LoopbackGrpcJob(2, domains: ["campus-a", "campus-b"], gatewayOf: _ => relay.Address.ToString());
        // Beyond StreamSender.ChunkSize, so the message crosses the relay as Data and Chunk frames.
        var large = Enumerable.Range(0, 3 * 1024 * 1024 + 5).Select(i => (byte)i).ToArray();

        // Act: synchronous sends both ways, so acknowledgements cross the relay too.
        Pmpi.Environment.Run(job, world =>
        {
            int peer = 1 - world.Rank;
            if (world.Rank == 0)
            {
                world.Ssend(large, peer, tag: 1);
                Assert.Equal(7, world.Receive<int>(peer, tag: 2));
            }
            else
            {
                Assert.Equal(large, world.Receive<byte[]>(peer, tag: 1));
                world.Ssend(7, peer, tag: 2);
            }
        }, new EnvironmentOptions { Timeout = TestJob.Timeout });

        // Assert: rank 0 dialed its gateway, never rank 1, proving its route with the job key; rank 1 answered on the relayed call.
        var preamble = Assert.Single(relay.Preambles);
        Assert.Equal((0, 1), (preamble.Source, preamble.Destination));
        Assert.Equal(job.JobId, preamble.JobId);
        Assert.True(RouteProof.Matches(job.JobToken, job.JobId, 0, 1, preamble.Proof));
        Assert.Equal(1, job.Started(1)!.StreamsAccepted);
        Assert.Equal(0, job.Started(0)!.StreamsAccepted);
    }

    [Fact]
    public async Task Ssend_GatewayRefusesTheStream_FailsNamingThePeerAndTheRoute()
    {
        // Arrange: a gateway that refuses every stream.
        await using var gateway = Relay.Start(_ => throw new RpcException(new RpcStatus(StatusCode.PermissionDenied, "no such job here")));
        using var job = new LoopbackGrpcJob(2, domains: ["campus-a", "campus-b"], gatewayOf: _ => gateway.Address.ToString());

        // Act
        var error = Assert.Throws<MpiException>(() => Pmpi.Environment.Run(job, world =>
        {
            if (world.Rank == 0) world.Ssend(1, dest: 1, tag: 1);
            else world.Receive<int>(source: 0, tag: 1);
        }, new EnvironmentOptions { Timeout = TestJob.Timeout }));

        // Assert: the refusal's reason, the peer and the route.
        Assert.Contains("no such job here", error.Message);
        Assert.Contains("rank 1 (", error.Message);
        Assert.Contains($"via gateways {gateway.Address} -> {gateway.Address}", error.Message);
    }

    /// <summary>
    /// Reads each connection's relay preamble, answers OK once it reached the endpoint of the rank the preamble names
    /// (or the refusal that <c>endpointOf</c> throws), then copies bytes both ways, as the gateway pair does.
    /// </summary>
    private sealed class Relay : IAsyncDisposable
    {
        private readonly Func<int, string> _endpointOf;
        private readonly Socket _listener = new(SocketType.Stream, ProtocolType.Tcp);

        private Relay(Func<int, string> endpointOf) => _endpointOf = endpointOf;

        public Uri Address => new($"http://{_listener.LocalEndPoint}");

        public ConcurrentQueue<RelayPreamble> Preambles { get; } = new();

        public static Relay Start(Func<int, string> endpointOf)
        {
            var relay = new Relay(endpointOf);
            relay._listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            relay._listener.Listen(16);
            _ = relay.AcceptAsync();
            return relay;
        }

        public ValueTask DisposeAsync()
        {
            _listener.Dispose();
            return ValueTask.CompletedTask;
        }

        private async Task AcceptAsync()
        {
            while (true)
            {
                Socket caller;
                try
                {
                    caller = await _listener.AcceptAsync();
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }
                _ = RelayAsync(caller);
            }
        }

        private async Task RelayAsync(Socket caller)
        {
            using var _ = caller;
            var buffer = new byte[RelayPreamble.MaxLength];
            int read = 0, needed;
            RelayPreamble preamble;
            string malformed;
            while (!RelayPreamble.TryRead(buffer.AsSpan(0, read), out preamble, out needed, out malformed))
            {
                if (malformed.Length > 0) return;
                int received = await caller.ReceiveAsync(buffer.AsMemory(read, needed - read));
                if (received == 0) return;
                read += received;
            }
            Preambles.Enqueue(preamble);
            string endpoint;
            try
            {
                endpoint = _endpointOf(preamble.Destination);
            }
            catch (RpcException e)
            {
                await caller.SendAsync(RelayReply.Refusal(e.StatusCode, e.Status.Detail));
                return;
            }
            var address = new Uri(endpoint);
            using var next = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await next.ConnectAsync(address.Host, address.Port);
            await caller.SendAsync(RelayReply.Ok.ToArray());
            await Task.WhenAll(CopyAsync(caller, next), CopyAsync(next, caller));
        }

        private static async Task CopyAsync(Socket from, Socket to)
        {
            var buffer = new byte[64 * 1024];
            try
            {
                int read;
                while ((read = await from.ReceiveAsync(buffer)) > 0) await to.SendAsync(buffer.AsMemory(0, read));
                to.Shutdown(SocketShutdown.Send);
            }
            catch (SocketException)
            {
                from.Close();
                to.Close();
            }
        }
    }
}
