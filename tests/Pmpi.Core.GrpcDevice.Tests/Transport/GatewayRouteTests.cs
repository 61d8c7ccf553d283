using System.Collections.Concurrent;
using System.Net;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Transport;

/// <summary>
/// A peer in another domain is reached through the sender's domain's gateway, on the same gRPC link code with another
/// target: the stream opens at the gateway with a Hello naming the destination rank. Here a relay standing in for the
/// gateway pair forwards each stream to the rank its Hello names, so the device is tested alone; the real gateways
/// (src/Pmpi.Gateway) are tested in Pmpi.Gateway.Tests and, between real processes, in Pmpi.Integration.Tests.
/// </summary>
public sealed class GatewayRouteTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Send_PeerInAnotherDomain_OpensTheStreamAtOwnGatewayNamingTheDestination()
    {
        // Arrange
        LoopbackGrpcJob? job = null;
        await using var relay = await Relay.StartAsync(rank => job!.EndpointOf(rank));
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

        // Assert: rank 0 dialed its gateway, never rank 1; rank 1 answered on the relayed call.
        var hello = Assert.Single(relay.Hellos);
        Assert.Equal((0, 1), (hello.SourceWorldRank, hello.DestinationWorldRank));
        Assert.Equal(job.JobId, hello.JobId);
        Assert.Equal(1, job.Started(1)!.StreamsAccepted);
        Assert.Equal(0, job.Started(0)!.StreamsAccepted);
    }

    [Fact]
    public async Task Ssend_GatewayRefusesTheStream_FailsNamingThePeerAndTheRoute()
    {
        // Arrange: a gateway that refuses every stream.
        await using var gateway = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
            endpoints.MapGrpcDuplexStreaming<Frame, Frame>(ServicePaths.Connect, (_, _, _) => throw new RpcException(StatusCode.Unavailable, "no such job here"))).WaitAsync(Timeout);
        using var job = new LoopbackGrpcJob(2, domains: ["campus-a", "campus-b"], gatewayOf: _ => gateway.Address.ToString());

        // Act
        var error = Assert.Throws<MpiException>(() => Pmpi.Environment.Run(job, world =>
        {
            if (world.Rank == 0) world.Ssend(1, dest: 1, tag: 1);
            else world.Receive<int>(source: 0, tag: 1);
        }, new EnvironmentOptions { Timeout = TestJob.Timeout }));

        // Assert
        // Whichever end of the call notices first (the dial, the write or the read of the refusal) names the peer and the route.
        Assert.Contains("rank 1 (", error.Message);
        Assert.Contains($"via gateways {gateway.Address} -> {gateway.Address}", error.Message);
    }

    /// <summary>Forwards each Connect call, both ways frame by frame, to the endpoint of the rank its Hello names.</summary>
    private sealed class Relay : IAsyncDisposable
    {
        private readonly Func<int, string> _endpointOf;
        private RpcServer _server = null!;

        private Relay(Func<int, string> endpointOf) => _endpointOf = endpointOf;

        public Uri Address => _server.Address;

        public ConcurrentQueue<Hello> Hellos { get; } = new();

        public static async Task<Relay> StartAsync(Func<int, string> endpointOf)
        {
            var relay = new Relay(endpointOf);
            relay._server = await RpcServer.StartAsync(IPAddress.Loopback, 0,
                endpoints => endpoints.MapGrpcDuplexStreaming<Frame, Frame>(ServicePaths.Connect, relay.ForwardAsync)).WaitAsync(Timeout);
            return relay;
        }

        public ValueTask DisposeAsync() => _server.DisposeAsync();

        private async Task ForwardAsync(MessageReader<Frame> requests, MessageWriter<Frame> responses, ServerCallContext context)
        {
            var cancellation = context.CancellationToken;
            var first = await requests.ReadAsync(cancellation);
            if (first?.Hello is not { } hello) throw new RpcException(StatusCode.InvalidArgument, "A relayed stream must open with a Hello.");
            Hellos.Enqueue(hello);
            using var channel = new RpcChannel(new Uri(_endpointOf(hello.DestinationWorldRank)));
            await using var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect);
            await call.Requests.WriteAsync(first, cancellation);
            var upstream = Task.Run(async () =>
            {
                while (await requests.ReadAsync(cancellation) is { } frame) await call.Requests.WriteAsync(frame, cancellation);
                await call.CompleteRequestsAsync(cancellation);
            }, cancellation);
            while (await call.Responses.ReadAsync(cancellation) is { } frame) await responses.WriteAsync(frame, cancellation);
            await upstream;
        }
    }
}
