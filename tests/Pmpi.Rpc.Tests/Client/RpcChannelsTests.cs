using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Client;

/// <summary>
/// Calls through <see cref="RpcChannels"/>' channels against a real gRPC for .NET server on loopback: what the
/// daemons' callers rely on, statuses, deadlines and cancellation reaching the handler, and the message limit.
/// </summary>
public sealed class RpcChannelsTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;
    private TestServer _server = null!;

    public async Task InitializeAsync() => _server = await TestServer.StartAsync().WaitAsync(Timeout);

    public async Task DisposeAsync() => await _server.DisposeAsync().AsTask().WaitAsync(Timeout);

    [Fact]
    public async Task Unary_KnownMethod_ReturnsResponse()
    {
        using var channel = RpcChannels.For(_server.Address);

        var info = await new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal(TestServer.Node(), info);
    }

    [Fact]
    public async Task ServerStreaming_EventsArriveInOrderThenEndOk()
    {
        using var channel = RpcChannels.For(_server.Address);
        var request = new LaunchRequest { JobId = "job", WorldSize = 2, Ranks = { new RankLaunch { Rank = 0, Program = "a" }, new RankLaunch { Rank = 1, Program = "b" } } };
        using var call = new Agent.AgentClient(channel).Launch(request);

        var events = await call.ResponseStream.ReadAllAsync().ToListAsync().AsTask().WaitAsync(Timeout);

        Assert.Equal([LaunchEvent.BodyOneofCase.Started, LaunchEvent.BodyOneofCase.Output, LaunchEvent.BodyOneofCase.Exited], events.Take(3).Select(e => e.BodyCase));
        Assert.Equal("hello from b", events[4].Output.Line);
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }

    [Fact]
    public async Task Unary_HandlerThrowsRpcException_StatusAndDetailNeedingEncodingReachClient()
    {
        using var channel = RpcChannels.For(_server.Address);

        var error = await Assert.ThrowsAsync<RpcException>(() => new Agent.AgentClient(channel).KillAsync(new KillRequest { JobId = "x y\n" }).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal((StatusCode.PermissionDenied, "wrong token for job 'x y\n' (100% sure, é)"), (error.StatusCode, error.Status.Detail));
    }

    [Theory]
    [InlineData("/pmpi.v1.Agent/NoSuchMethod")]
    [InlineData("/no.Such/Service")]
    public async Task Unary_UnknownMethod_Unimplemented(string path)
    {
        using var channel = RpcChannels.For(_server.Address);
        var method = GrpcMethods.Create<KillRequest, KillReply>(MethodType.Unary, path);

        var error = await Assert.ThrowsAsync<RpcException>(() => channel.CreateCallInvoker().AsyncUnaryCall(method, null, default, new KillRequest()).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unimplemented, error.StatusCode);
    }

    [Fact]
    public async Task Unary_DeadlinePasses_DeadlineExceededAndHandlerCancelled()
    {
        using var channel = RpcChannels.For(_server.Address);

        // Long enough for the handler to start even on a loaded machine: a call whose deadline passes before its
        // handler runs never runs it, and there would be no handler to see the cancellation.
        var error = await Assert.ThrowsAsync<RpcException>(() => new JobControl.JobControlClient(channel)
            .RegisterAsync(new RegisterRequest(), deadline: DateTime.UtcNow.AddSeconds(2)).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal(StatusCode.DeadlineExceeded, error.StatusCode);
        await _server.HandlerCancelled.WaitAsync(Timeout);
    }

    [Fact]
    public async Task Unary_CallerCancels_CancelledAndHandlerCancelled()
    {
        using var channel = RpcChannels.For(_server.Address);
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(2));

        var error = await Assert.ThrowsAsync<RpcException>(() => new JobControl.JobControlClient(channel)
            .RegisterAsync(new RegisterRequest(), cancellationToken: cancel.Token).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Cancelled, error.StatusCode);
        await _server.HandlerCancelled.WaitAsync(Timeout);
    }

    [Fact]
    public async Task Unary_ResponseOverTheChannelsLimit_ResourceExhausted()
    {
        using var strict = RpcChannels.For(_server.Address, options: new RpcOptions { MaxMessageSize = TestServer.Node().CalculateSize() - 1 });

        var error = await Assert.ThrowsAsync<RpcException>(() => new Agent.AgentClient(strict).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
    }

    [Fact]
    public async Task Unary_NothingListening_Unavailable()
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        using var channel = RpcChannels.For(new Uri($"http://127.0.0.1:{port}"));

        var error = await Assert.ThrowsAsync<RpcException>(() => new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
    }
}
