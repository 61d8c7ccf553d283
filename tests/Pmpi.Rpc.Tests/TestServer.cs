using System.Globalization;
using System.Net;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.AspNetCore.Routing;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;
using ServerCallContext = Pmpi.Rpc.Kestrel.ServerCallContext;

namespace Pmpi.Rpc.Tests;

/// <summary>
/// A real Kestrel server on 127.0.0.1 with a free port, serving the methods the tests (and the Python interop
/// client) call: PMPI's own paths with test handlers, and a few /test.* methods for error paths.
/// </summary>
internal sealed class TestServer : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>Paths of the test-only methods.</summary>
    public const string Count = "/test.Stream/Count";
    public const string FailStatus = "/test.Fail/Status";
    public const string FailThrow = "/test.Fail/Throw";
    public const string FailAfterMessages = "/test.Fail/AfterMessages";
    public const string SlowUnary = "/test.Slow/Wait";
    public const string SmallEcho = "/test.Small/Echo";
    public const string BigReply = "/test.Big/Reply";

    /// <summary>The largest message <see cref="SmallEcho"/> accepts.</summary>
    public const int SmallLimit = 1024;

    private TestServer(RpcServer server) => Server = server;

    public RpcServer Server { get; }

    public Uri Address => Server.Address;

    /// <summary>Completed when a handler saw its call cancelled (deadline or client gone).</summary>
    public TaskCompletionSource HandlerCancelled { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public static async Task<TestServer> StartAsync()
    {
        TestServer? self = null;
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => Map(endpoints, cancelled)).WaitAsync(Timeout);
        self = new TestServer(server);
        // The handlers were mapped before the server object existed: forward their signal.
        _ = cancelled.Task.ContinueWith(_ => self.HandlerCancelled.TrySetResult(), TaskScheduler.Default);
        return self;
    }

    /// <summary>The node the GetNodeInfo handler describes.</summary>
    public static NodeInfo Node()
    {
        var node = new NodeInfo
        {
            NodeName = "dotnet-node",
            LogicalCores = 3,
            CpuModel = "Test CPU",
            LoadAverage1 = 0.5,
            LoadAverage5 = 0.25,
            LoadAverage15 = double.NaN,
            MemoryTotalBytes = 24L << 30,
            MemoryAvailableBytes = 12L << 30,
            OsDescription = "Test OS",
            OsVersion = "1.0",
            Architecture = "X64",
            RuntimeVersion = ".NET 10",
            Domain = "campus-a",
            Slots = 2,
        };
        node.RunningJobs.Add("job-a");
        node.RunningJobs.Add("job-b");
        return node;
    }

    private static void Map(IEndpointRouteBuilder endpoints, TaskCompletionSource cancelled)
    {
        endpoints.MapGrpcUnary<NodeInfoRequest, NodeInfo>(ServicePaths.GetNodeInfo, (_, _) => Task.FromResult(Node()));
        endpoints.MapGrpcDuplexStreaming<Frame, Frame>(ServicePaths.Connect, async (requests, responses, call) =>
        {
            while (await requests.ReadAsync(call.CancellationToken) is { } frame) await responses.WriteAsync(frame, call.CancellationToken);
        });
        endpoints.MapGrpcServerStreaming<LaunchRequest, LaunchEvent>(ServicePaths.Launch, async (request, responses, call) =>
        {
            foreach (var rank in request.Ranks)
            {
                await responses.WriteAsync(new LaunchEvent { Started = new RankStarted { Rank = rank.Rank, ProcessId = 1000 + rank.Rank } }, call.CancellationToken);
                await responses.WriteAsync(new LaunchEvent { Output = new RankOutput { Rank = rank.Rank, Line = $"hello from {rank.Program}" } }, call.CancellationToken);
                await responses.WriteAsync(new LaunchEvent { Exited = new RankExited { Rank = rank.Rank, ExitCode = 0 } }, call.CancellationToken);
            }
        });
        endpoints.MapGrpcUnary<KillRequest, KillReply>(ServicePaths.Kill,
            (request, _) => throw new RpcException(new Status(StatusCode.PermissionDenied, $"wrong token for job '{request.JobId}' (100% sure, é)")));
        endpoints.MapGrpcUnary<RegisterRequest, RankTable>(ServicePaths.Register, async (_, call) =>
        {
            await WaitForCancellationAsync(call, cancelled);
            return new RankTable();
        });

        endpoints.MapGrpcServerStreaming<KillRequest, KillReply>(Count, async (request, responses, call) =>
        {
            int count = int.Parse(request.JobId, CultureInfo.InvariantCulture);
            for (int i = 0; i < count; i++) await responses.WriteAsync(new KillReply { Killed = i }, call.CancellationToken);
        });
        endpoints.MapGrpcUnary<KillRequest, KillReply>(FailStatus,
            (request, _) => throw new RpcException(new Status(StatusCode.PermissionDenied, $"token '{request.JobId}' is wrong")));
        endpoints.MapGrpcUnary<KillRequest, KillReply>(FailThrow,
            (_, _) => throw new InvalidOperationException("handler bug"));
        endpoints.MapGrpcServerStreaming<KillRequest, KillReply>(FailAfterMessages, async (_, responses, call) =>
        {
            for (int i = 0; i < 3; i++) await responses.WriteAsync(new KillReply { Killed = i }, call.CancellationToken);
            throw new RpcException(new Status(StatusCode.Aborted, "stopped after 3"));
        });
        endpoints.MapGrpcUnary<KillRequest, KillReply>(SlowUnary, async (_, call) =>
        {
            await WaitForCancellationAsync(call, cancelled);
            return new KillReply();
        });
        endpoints.MapGrpcUnary<KillRequest, Chunk>(BigReply, (request, _) =>
            Task.FromResult(new Chunk { Payload = UnsafeByteOperations.UnsafeWrap(new byte[int.Parse(request.JobId, CultureInfo.InvariantCulture)]) }));
        endpoints.MapGrpcDuplexStreaming<Frame, Frame>(SmallEcho, async (requests, responses, call) =>
        {
            while (await requests.ReadAsync(call.CancellationToken) is { } frame) await responses.WriteAsync(frame, call.CancellationToken);
        }, new RpcOptions { MaxMessageSize = SmallLimit });
    }

    /// <summary>Waits (at most a minute) until the call is cancelled, and says so.</summary>
    private static async Task WaitForCancellationAsync(ServerCallContext call, TaskCompletionSource cancelled)
    {
        try
        {
            await Task.Delay(TimeSpan.FromMinutes(1), call.CancellationToken);
        }
        catch (OperationCanceledException)
        {
            cancelled.TrySetResult();
            throw;
        }
    }

    public async ValueTask DisposeAsync() => await Server.DisposeAsync().AsTask().WaitAsync(Timeout);
}
