using System.Net;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests;

/// <summary>
/// A real Kestrel server (gRPC for .NET) on 127.0.0.1 with a free port, serving what the tests and the Python interop
/// client call: Agent and JobControl with test handlers, and RankTransport.Connect echoing every frame.
/// </summary>
internal sealed class TestServer : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly TestJobControl _jobControl;

    private TestServer(RpcServer server, TestJobControl jobControl)
    {
        Server = server;
        _jobControl = jobControl;
    }

    public RpcServer Server { get; }

    public Uri Address => Server.Address;

    /// <summary>Completed when JobControl.Register's handler saw its call cancelled (deadline or client gone).</summary>
    public Task HandlerCancelled => _jobControl.Cancelled.Task;

    public static async Task<TestServer> StartAsync()
    {
        var jobControl = new TestJobControl();
        var server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
        {
            endpoints.MapGrpcService<TestAgent>();
            endpoints.MapGrpcService<TestJobControl>();
            endpoints.MapGrpcService<Echo>();
        }, services => services.AddSingleton(jobControl)).WaitAsync(Timeout);
        return new TestServer(server, jobControl);
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

    public async ValueTask DisposeAsync() => await Server.DisposeAsync().AsTask().WaitAsync(Timeout);

    private sealed class TestAgent : Agent.AgentBase
    {
        public override Task<NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context) => Task.FromResult(Node());

        public override async Task Launch(LaunchRequest request, IServerStreamWriter<LaunchEvent> responseStream, ServerCallContext context)
        {
            foreach (var rank in request.Ranks)
            {
                await responseStream.WriteAsync(new LaunchEvent { Started = new RankStarted { Rank = rank.Rank, ProcessId = 1000 + rank.Rank } });
                await responseStream.WriteAsync(new LaunchEvent { Output = new RankOutput { Rank = rank.Rank, Line = $"hello from {rank.Program}" } });
                await responseStream.WriteAsync(new LaunchEvent { Exited = new RankExited { Rank = rank.Rank, ExitCode = 0 } });
            }
        }

        public override Task<KillReply> Kill(KillRequest request, ServerCallContext context) =>
            throw new RpcException(new Status(StatusCode.PermissionDenied, $"wrong token for job '{request.JobId}' (100% sure, é)"));
    }

    /// <summary>Register waits (at most a minute) until its call is cancelled, and says so.</summary>
    private sealed class TestJobControl : JobControl.JobControlBase
    {
        public TaskCompletionSource Cancelled { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override async Task<RankTable> Register(RegisterRequest request, ServerCallContext context)
        {
            try
            {
                await Task.Delay(TimeSpan.FromMinutes(1), context.CancellationToken);
            }
            catch (OperationCanceledException)
            {
                Cancelled.TrySetResult();
                throw;
            }
            return new RankTable();
        }
    }

    private sealed class Echo : RankTransportBase
    {
        public override async Task Connect(IAsyncStreamReader<Frame> requests, IServerStreamWriter<Frame> responses, ServerCallContext context)
        {
            await foreach (var frame in requests.ReadAllAsync(context.CancellationToken)) await responses.WriteAsync(frame, context.CancellationToken);
        }
    }
}
