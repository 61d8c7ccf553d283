using System.Net;
using System.Net.Http.Headers;
using Google.Protobuf;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests;

public sealed class RpcCallTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private RpcServer _server = null!;
    private RpcChannel _channel = null!;

    public async Task InitializeAsync()
    {
        _server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
        {
            endpoints.MapGrpcUnary<NodeInfoRequest, NodeInfo>("/pmpi.v1.Agent/GetNodeInfo",
                (_, _) => Task.FromResult(new NodeInfo { NodeName = "test-node", LogicalCores = 7 }));
            endpoints.MapGrpcServerStreaming<KillRequest, KillReply>("/test.Stream/Count", async (request, responses, call) =>
            {
                int count = int.Parse(request.JobId, System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++) await responses.WriteAsync(new KillReply { Killed = i }, call.CancellationToken);
            });
            endpoints.MapGrpcDuplexStreaming<Frame, Frame>("/pmpi.v1.RankTransport/Connect", async (requests, responses, call) =>
            {
                while (await requests.ReadAsync(call.CancellationToken) is { } frame) await responses.WriteAsync(frame, call.CancellationToken);
            });
            endpoints.MapGrpcUnary<KillRequest, KillReply>("/test.Fail/Status",
                (request, _) => throw new RpcException(StatusCode.PermissionDenied, $"token '{request.JobId}' is wrong"));
            endpoints.MapGrpcUnary<KillRequest, KillReply>("/test.Fail/Throw",
                (_, _) => throw new InvalidOperationException("handler bug"));
            endpoints.MapGrpcUnary<KillRequest, KillReply>("/test.Slow/Wait", async (_, call) =>
            {
                await Task.Delay(TimeSpan.FromMinutes(1), call.CancellationToken);
                return new KillReply();
            });
        }).WaitAsync(Timeout);
        _channel = new RpcChannel(_server.Address);
    }

    public async Task DisposeAsync()
    {
        _channel.Dispose();
        await _server.DisposeAsync().AsTask().WaitAsync(Timeout);
    }

    [Fact]
    public async Task UnaryAsync_KnownMethod_ReturnsResponse()
    {
        var info = await _channel.UnaryAsync<NodeInfoRequest, NodeInfo>("/pmpi.v1.Agent/GetNodeInfo", new NodeInfoRequest()).WaitAsync(Timeout);

        Assert.Equal(("test-node", 7), (info.NodeName, info.LogicalCores));
    }

    [Fact]
    public async Task ServerStreamingAsync_ManyResponses_ArriveInOrder()
    {
        var received = new List<int>();
        await foreach (var reply in _channel.ServerStreamingAsync<KillRequest, KillReply>("/test.Stream/Count", new KillRequest { JobId = "500" }).WithCancellation(new CancellationTokenSource(Timeout).Token))
            received.Add(reply.Killed);

        Assert.Equal(Enumerable.Range(0, 500), received);
    }

    [Fact]
    public async Task ServerStreamingAsync_NoResponses_EndsCleanly()
    {
        var received = await _channel.ServerStreamingAsync<KillRequest, KillReply>("/test.Stream/Count", new KillRequest { JobId = "0" }).ToListAsync().AsTask().WaitAsync(Timeout);

        Assert.Empty(received);
    }

    [Fact]
    public async Task Duplex_PingPongAndLargeFrames_EchoIntact()
    {
        await using var call = await _channel.StartAsync<Frame, Frame>("/pmpi.v1.RankTransport/Connect").WaitAsync(Timeout);
        for (int i = 0; i < 200; i++)
        {
            await call.Requests.WriteAsync(new Frame { Ack = new Ack { Sequence = (ulong)i } }, CancellationToken.None).AsTask().WaitAsync(Timeout);
            var echo = await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout);
            Assert.Equal((ulong)i, echo!.Ack.Sequence);
        }
        var big = new byte[12 << 20];
        Random.Shared.NextBytes(big);
        await call.Requests.WriteAsync(new Frame { Chunk = new Chunk { Payload = UnsafeByteOperations.UnsafeWrap(big) } }, CancellationToken.None).AsTask().WaitAsync(Timeout);
        var bigEcho = await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.True(bigEcho!.Chunk.Payload.Span.SequenceEqual(big));

        await call.CompleteRequestsAsync().WaitAsync(Timeout);
        Assert.Null(await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout));
    }

    [Fact]
    public async Task UnaryAsync_HandlerThrowsRpcException_StatusReachesClientTrailersOnly()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>("/test.Fail/Status", new KillRequest { JobId = "x y%" })).WaitAsync(Timeout);

        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Equal("token 'x y%' is wrong", error.Detail);
    }

    [Fact]
    public async Task UnaryAsync_HandlerBug_UnknownStatusAndServerLives()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>("/test.Fail/Throw", new KillRequest())).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unknown, error.StatusCode);
        Assert.Contains("handler bug", error.Detail);
        await UnaryAsync_KnownMethod_ReturnsResponse();
    }

    [Fact]
    public async Task UnaryAsync_UnknownMethod_Unimplemented()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>("/pmpi.v1.Agent/NoSuchMethod", new KillRequest())).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unimplemented, error.StatusCode);
        Assert.Contains("NoSuchMethod", error.Detail);
    }

    [Fact]
    public async Task UnaryAsync_DeadlinePasses_DeadlineExceeded()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>("/test.Slow/Wait", new KillRequest(), TimeSpan.FromMilliseconds(300))).WaitAsync(Timeout);

        Assert.Equal(StatusCode.DeadlineExceeded, error.StatusCode);
    }

    [Fact]
    public async Task Post_WrongContentType_Http415()
    {
        using var http = new HttpClient(new SocketsHttpHandler()) { DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
        using var content = new ByteArrayContent([1, 2, 3]);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/json");

        using var response = await http.PostAsync(new Uri(_server.Address, "/pmpi.v1.Agent/GetNodeInfo"), content).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
    }

    [Fact]
    public async Task Duplex_MessageOverLimit_ResourceExhaustedNamingOption()
    {
        using var strict = new RpcChannel(_server.Address, new RpcOptions { MaxMessageSize = 1024 });
        await using var call = await strict.StartAsync<Frame, Frame>("/pmpi.v1.RankTransport/Connect").WaitAsync(Timeout);
        await call.Requests.WriteAsync(new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[4096]) } }, CancellationToken.None).AsTask().WaitAsync(Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.Responses.ReadAsync(CancellationToken.None).AsTask()).WaitAsync(Timeout);

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains("RpcOptions.MaxMessageSize", error.Detail);
    }
}
