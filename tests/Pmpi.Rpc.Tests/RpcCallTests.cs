using System.Net;
using System.Net.Http.Headers;
using System.Net.Sockets;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests;

/// <summary>Calls through <see cref="RpcChannel"/> against a real Kestrel server on loopback.</summary>
public sealed class RpcCallTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;
    private TestServer _server = null!;
    private RpcChannel _channel = null!;

    public async Task InitializeAsync()
    {
        _server = await TestServer.StartAsync().WaitAsync(Timeout);
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
        var info = await _channel.UnaryAsync<NodeInfoRequest, NodeInfo>(ServicePaths.GetNodeInfo, new NodeInfoRequest()).WaitAsync(Timeout);

        Assert.Equal(TestServer.Node(), info);
    }

    [Fact]
    public async Task UnaryAsync_ManyConcurrentCalls_AllAnswered()
    {
        var calls = new Task<NodeInfo>[50];
        for (int i = 0; i < calls.Length; i++) calls[i] = _channel.UnaryAsync<NodeInfoRequest, NodeInfo>(ServicePaths.GetNodeInfo, new NodeInfoRequest());

        var infos = await Task.WhenAll(calls).WaitAsync(Timeout);

        Assert.All(infos, info => Assert.Equal("dotnet-node", info.NodeName));
    }

    [Fact]
    public async Task ServerStreamingAsync_ManyResponses_ArriveInOrder()
    {
        using var timeout = new CancellationTokenSource(Timeout);
        var received = new List<int>();
        await foreach (var reply in _channel.ServerStreamingAsync<KillRequest, KillReply>(TestServer.Count, new KillRequest { JobId = "500" }).WithCancellation(timeout.Token))
            received.Add(reply.Killed);

        Assert.Equal(Enumerable.Range(0, 500), received);
    }

    [Fact]
    public async Task ServerStreamingAsync_NoResponses_EndsCleanly()
    {
        var received = await _channel.ServerStreamingAsync<KillRequest, KillReply>(TestServer.Count, new KillRequest { JobId = "0" }).ToListAsync().AsTask().WaitAsync(Timeout);

        Assert.Empty(received);
    }

    [Fact]
    public async Task ServerStreamingAsync_FailsAfterMessages_MessagesThenStatusFromTrailers()
    {
        using var timeout = new CancellationTokenSource(Timeout);
        var received = new List<int>();

        var error = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var reply in _channel.ServerStreamingAsync<KillRequest, KillReply>(TestServer.FailAfterMessages, new KillRequest()).WithCancellation(timeout.Token))
                received.Add(reply.Killed);
        }).WaitAsync(Timeout);

        Assert.Equal([0, 1, 2], received);
        Assert.Equal((StatusCode.Aborted, "stopped after 3"), (error.StatusCode, error.Status.Detail));
    }

    [Fact]
    public async Task DuplexStreaming_PingPongManyMessages_EchoedInOrder()
    {
        await using var call = await _channel.StartAsync<Frame, Frame>(ServicePaths.Connect).WaitAsync(Timeout);
        for (int i = 0; i < 2000; i++)
        {
            await call.Requests.WriteAsync(new Frame { Ack = new Ack { Sequence = (ulong)i } }, CancellationToken.None).AsTask().WaitAsync(Timeout);
            var echo = await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout);
            Assert.Equal((ulong)i, echo!.Ack.Sequence);
        }

        await call.CompleteRequestsAsync().WaitAsync(Timeout);

        Assert.Null(await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout));
    }

    [Fact]
    public async Task DuplexStreaming_BurstWrittenBeforeReading_AllEchoed()
    {
        // Many small messages land in one read on both sides: each must come out without waiting for more bytes.
        await using var call = await _channel.StartAsync<Frame, Frame>(ServicePaths.Connect).WaitAsync(Timeout);
        const int Count = 1000;
        for (int i = 0; i < Count; i++)
            await call.Requests.WriteAsync(new Frame { Ack = new Ack { Sequence = (ulong)i } }, CancellationToken.None).AsTask().WaitAsync(Timeout);

        for (int i = 0; i < Count; i++)
        {
            var echo = await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout);
            Assert.Equal((ulong)i, echo!.Ack.Sequence);
        }
        await call.CompleteRequestsAsync().WaitAsync(Timeout);
        Assert.Null(await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout));
    }

    [Fact]
    public async Task DuplexStreaming_16MBMessages_EchoedIntact()
    {
        var big = new byte[16 << 20];
        Random.Shared.NextBytes(big);
        await using var call = await _channel.StartAsync<Frame, Frame>(ServicePaths.Connect).WaitAsync(Timeout);

        for (int round = 0; round < 2; round++)
        {
            big[0] = (byte)round;
            var frame = new Frame { Data = new Data { Sequence = (ulong)round, TotalLength = big.Length, Payload = UnsafeByteOperations.UnsafeWrap(big) } };
            await call.Requests.WriteAsync(frame, CancellationToken.None).AsTask().WaitAsync(Timeout);
            var echo = await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout);

            Assert.Equal((ulong)round, echo!.Data.Sequence);
            Assert.True(echo.Data.Payload.Span.SequenceEqual(big));
        }
    }

    [Fact]
    public async Task UnaryAsync_HandlerThrowsRpcException_StatusAndDetailReachClient()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>(TestServer.FailStatus, new KillRequest { JobId = "x y%é\n" })).WaitAsync(Timeout);

        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Equal("token 'x y%é\n' is wrong", error.Status.Detail);
    }

    [Fact]
    public async Task Post_HandlerFailsBeforeAnyMessage_TrailersOnlyResponseWithEncodedMessage()
    {
        using var http = RawClient();
        using var request = GrpcRequest(TestServer.FailStatus, new KillRequest { JobId = "50% é" });

        using var response = await http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/grpc", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal("7", Assert.Single(response.Headers.GetValues("grpc-status")));
        Assert.Equal("token '50%25 %C3%A9' is wrong", Assert.Single(response.Headers.GetValues("grpc-message")));
        Assert.Empty(await response.Content.ReadAsByteArrayAsync().WaitAsync(Timeout));
    }

    [Fact]
    public async Task Post_Success_StatusInTrailersAfterMessage()
    {
        using var http = RawClient();
        using var request = GrpcRequest(ServicePaths.GetNodeInfo, new NodeInfoRequest());

        using var response = await http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Timeout);
        var body = await response.Content.ReadAsByteArrayAsync().WaitAsync(Timeout);

        Assert.False(response.Headers.Contains("grpc-status"));
        Assert.Equal(0, body[0]);
        Assert.Equal(TestServer.Node(), NodeInfo.Parser.ParseFrom(body.AsSpan(5)));
        Assert.Equal("0", Assert.Single(response.TrailingHeaders.GetValues("grpc-status")));
    }

    [Fact]
    public async Task UnaryAsync_HandlerBug_UnknownStatusAndServerLives()
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>(TestServer.FailThrow, new KillRequest())).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unknown, error.StatusCode);
        Assert.Contains("handler bug", error.Status.Detail);
        await UnaryAsync_KnownMethod_ReturnsResponse();
    }

    [Theory]
    [InlineData("/pmpi.v1.Agent/NoSuchMethod")]
    [InlineData("/no.Such/Service")]
    public async Task UnaryAsync_UnknownMethod_Unimplemented(string path)
    {
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>(path, new KillRequest())).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unimplemented, error.StatusCode);
        Assert.Contains(path, error.Status.Detail);
    }

    [Fact]
    public async Task WriteAsync_AfterTheServerEndedTheCallWithoutReadingToTheEnd_ThrowsItsStatus()
    {
        // The handler fails after the first request, before the request stream ended, so the server resets the
        // stream (NO_ERROR) after its status: SocketsHttpHandler abandons the body and disposes the request stream.
        await using var call = await _channel.StartAsync<KillRequest, KillReply>(TestServer.FailStatus).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new KillRequest(), default).AsTask().WaitAsync(Timeout);
        await Task.Delay(TimeSpan.FromMilliseconds(500));

        var error = await Assert.ThrowsAsync<RpcException>(() => call.Requests.WriteAsync(new KillRequest(), default).AsTask()).WaitAsync(Timeout);

        Assert.True(error.StatusCode == StatusCode.PermissionDenied, $"{error.StatusCode}: {error.Status.Detail}");
    }

    [Fact]
    public async Task Post_WrongContentType_Http415()
    {
        using var http = RawClient();
        using var content = new ByteArrayContent([1, 2, 3]);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/json");

        using var response = await http.PostAsync(new Uri(_server.Address, ServicePaths.GetNodeInfo), content).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
    }

    [Fact]
    public async Task UnaryAsync_DeadlinePasses_DeadlineExceededAndHandlerCancelled()
    {
        // Long enough for the handler to start even on a loaded machine: a call whose deadline passes before its
        // handler runs never runs it, and there would be no handler to see the cancellation.
        var error = await Assert.ThrowsAsync<RpcException>(() => _channel.UnaryAsync<KillRequest, KillReply>(TestServer.SlowUnary, new KillRequest(), TimeSpan.FromSeconds(2))).WaitAsync(Timeout);

        Assert.Equal(StatusCode.DeadlineExceeded, error.StatusCode);
        await _server.HandlerCancelled.Task.WaitAsync(Timeout);
    }

    [Fact]
    public async Task DuplexStreaming_DeadlinePassesMidStream_DeadlineExceeded()
    {
        await using var call = await _channel.StartAsync<Frame, Frame>(ServicePaths.Connect, TimeSpan.FromMilliseconds(500)).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new Frame { Ack = new Ack { Sequence = 1 } }, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.NotNull(await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout));

        var error = await Assert.ThrowsAsync<RpcException>(() => call.Responses.ReadAsync(CancellationToken.None).AsTask()).WaitAsync(Timeout);

        Assert.Equal(StatusCode.DeadlineExceeded, error.StatusCode);
    }

    [Fact]
    public async Task DisposeAsync_CallInProgress_ServerHandlerCancelled()
    {
        var call = await _channel.StartAsync<KillRequest, KillReply>(TestServer.SlowUnary).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new KillRequest(), CancellationToken.None).AsTask().WaitAsync(Timeout);
        await Task.Delay(200);

        await call.DisposeAsync().AsTask().WaitAsync(Timeout);

        await _server.HandlerCancelled.Task.WaitAsync(Timeout);
    }

    [Fact]
    public async Task ReadAsync_CallerCancels_OperationCanceledException()
    {
        await using var call = await _channel.StartAsync<Frame, Frame>(ServicePaths.Connect).WaitAsync(Timeout);
        using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call.Responses.ReadAsync(cancel.Token).AsTask()).WaitAsync(Timeout);
    }

    [Fact]
    public async Task UnaryAsync_ResponseOverClientLimit_ResourceExhaustedNamingOption()
    {
        using var strict = new RpcChannel(_server.Address, new RpcOptions { MaxMessageSize = 64 * 1024 });

        var error = await Assert.ThrowsAsync<RpcException>(() => strict.UnaryAsync<KillRequest, Chunk>(TestServer.BigReply, new KillRequest { JobId = "100000" })).WaitAsync(Timeout);

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains("exceeds the limit of 65536 (see RpcOptions.MaxMessageSize)", error.Status.Detail);
    }

    [Fact]
    public async Task WriteAsync_RequestOverServerLimit_ServerEndsCallWithResourceExhausted()
    {
        await using var call = await _channel.StartAsync<Frame, Frame>(TestServer.SmallEcho).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[TestServer.SmallLimit * 4]) } }, CancellationToken.None).AsTask().WaitAsync(Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.Responses.ReadAsync(CancellationToken.None).AsTask()).WaitAsync(Timeout);

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains($"limit of {TestServer.SmallLimit} (see RpcOptions.MaxMessageSize)", error.Status.Detail);
    }

    [Fact]
    public async Task WriteAsync_MessageOverOwnLimit_RefusedBeforeSending()
    {
        using var strict = new RpcChannel(_server.Address, new RpcOptions { MaxMessageSize = 1000 });
        await using var call = await strict.StartAsync<Frame, Frame>(ServicePaths.Connect).WaitAsync(Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.Requests.WriteAsync(new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[2000]) } }, CancellationToken.None).AsTask()).WaitAsync(Timeout);

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains("RpcOptions.MaxMessageSize", error.Status.Detail);
        // Nothing was written, so the stream still works.
        await call.Requests.WriteAsync(new Frame { Ack = new Ack { Sequence = 9 } }, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(9UL, (await call.Responses.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout))!.Ack.Sequence);
    }

    [Fact]
    public async Task UnaryAsync_NothingListening_Unavailable()
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        using var channel = new RpcChannel(new Uri($"http://127.0.0.1:{port}"));

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync<NodeInfoRequest, NodeInfo>(ServicePaths.GetNodeInfo, new NodeInfoRequest())).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
    }

    private static HttpClient RawClient() =>
        new(new SocketsHttpHandler { UseProxy = false })
        {
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };

    private HttpRequestMessage GrpcRequest(string path, IMessage message)
    {
        var bytes = message.ToByteArray();
        var framed = new byte[5 + bytes.Length];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(framed.AsSpan(1), bytes.Length);
        bytes.CopyTo(framed, 5);
        var content = new ByteArrayContent(framed);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/grpc");
        var request = new HttpRequestMessage(HttpMethod.Post, new Uri(_server.Address, path))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = content,
        };
        request.Headers.TE.Add(new TransferCodingWithQualityHeaderValue("trailers"));
        return request;
    }
}
