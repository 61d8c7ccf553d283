using System.Net;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Devices;
using Pmpi.Devices.Grpc;
using Pmpi.Hosting;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;
// Pmpi.Status is an MPI status; this is a call's.
using RpcStatus = Grpc.Core.Status;

namespace Pmpi.Tests;

/// <summary>
/// A job whose ranks are threads of the test process, each started as a launched rank is (<see cref="LaunchedRank"/>):
/// its own Kestrel endpoint, registration with a master, a link per peer routed from the rank table, and HTTP/2
/// streams to its peers over loopback. The master here does what a PMPI master does for rendezvous and abort (answers
/// every rank with the table once all registered; turns one rank's Abort into every rank's), without agents or
/// processes, so the core suite runs unchanged on the wire.
/// </summary>
internal sealed class LoopbackGrpcJob : IThreadedJob
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly RpcServer _master;
    private readonly RankEntry?[] _table;
    private readonly string[] _domains;
    private readonly Func<int, string> _gatewayOf;
    private readonly LaunchedRank?[] _ranks;
    private readonly TaskCompletionSource<RankTable> _tableReady = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _lock = new();
    private readonly bool _encryptStreams;
    private readonly bool _sameNode;
    private MpiException? _aborted;
    private int _registered;

    /// <param name="size">Number of ranks.</param>
    /// <param name="domains">Each rank's domain in the rank table; by default every rank is in none.</param>
    /// <param name="gatewayOf">Each rank's domain's gateway in the rank table, asked once all registered; by default none.</param>
    /// <param name="encryptStreams">Whether the ranks' endpoints speak TLS with pinned certificates, as they do beyond loopback.</param>
    /// <param name="sameNode">Whether the table puts every rank on one node, so they link through shared memory; by default each has a node of its own.</param>
    public LoopbackGrpcJob(int size, string[]? domains = null, Func<int, string>? gatewayOf = null, bool encryptStreams = false, bool sameNode = false)
    {
        _encryptStreams = encryptStreams;
        _sameNode = sameNode;
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        _table = new RankEntry?[size];
        _domains = domains ?? [.. Enumerable.Repeat("", size)];
        _gatewayOf = gatewayOf ?? (_ => "");
        _ranks = new LaunchedRank?[size];
        _master = RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<MasterJobControl>(), services => services.AddSingleton(this))
            .WaitAsync(StartTimeout).GetAwaiter().GetResult();
    }

    public int Size => _table.Length;

    public string JobId { get; } = $"test-{Guid.NewGuid():N}";

    /// <summary>The job's secret, which ranks present to each other.</summary>
    public string JobToken { get; } = Guid.NewGuid().ToString("N");

    /// <summary>Where <paramref name="rank"/>'s endpoint listens, once it has registered.</summary>
    public string EndpointOf(int rank)
    {
        lock (_lock) return _table[rank]?.Endpoint ?? throw new InvalidOperationException($"Rank {rank} has not registered.");
    }

    /// <summary>The first abort the master saw, if any.</summary>
    public MpiException? Aborted
    {
        get { lock (_lock) return _aborted; }
    }

    public (IDevice Device, IJobControl Control) Start(int rank)
    {
        var identity = new RankIdentity(JobId, rank, Size, _master.Address.ToString(), JobToken, Domain: null, BindAddress: "127.0.0.1") { EncryptStreams = _encryptStreams };
        var started = LaunchedRank.StartAsync(identity, CancellationToken.None).WaitAsync(StartTimeout).GetAwaiter().GetResult();
        lock (_lock)
        {
            _ranks[rank] = started;
            // A rank may fail before a slower one got here; that one must still see the abort, as in a real job.
            if (_aborted is not null) started.Device.Engine.Abort(_aborted);
        }
        return (started.Device, started.Master);
    }

    /// <summary>The device <see cref="Start"/> made for <paramref name="rank"/>, if it was made.</summary>
    public GrpcDevice? Started(int rank)
    {
        lock (_lock) return _ranks[rank]?.Device;
    }

    public void Abort(MpiException reason)
    {
        _tableReady.TrySetException(reason);
        LaunchedRank?[] ranks;
        lock (_lock)
        {
            _aborted ??= reason;
            ranks = [.. _ranks];
        }
        foreach (var rank in ranks) rank?.Device.Engine.Abort(reason);
    }

    public void Dispose()
    {
        LaunchedRank?[] ranks;
        lock (_lock) ranks = [.. _ranks];
        // In parallel: each device closes its streams and waits briefly for its peers to see the end.
        Task.WaitAll([.. ranks.OfType<LaunchedRank>().Select(rank => Task.Run(rank.Dispose))], StartTimeout);
        _master.DisposeAsync().AsTask().WaitAsync(StartTimeout).GetAwaiter().GetResult();
    }

    private Task<RankTable> RegisterAsync(RegisterRequest request, CancellationToken cancellationToken)
    {
        if (request.JobId != JobId || request.JobToken != JobToken) throw new RpcException(new RpcStatus(StatusCode.PermissionDenied, $"Rank {request.Rank} registered for another job."));
        lock (_lock)
        {
            _table[request.Rank] = new RankEntry
            {
                Rank = request.Rank, Endpoint = request.Endpoint, Domain = _domains[request.Rank], Node = _sameNode ? "loopback" : $"loopback-{request.Rank}", CertificateSha256 = request.CertificateSha256,
            };
            if (++_registered == Size)
            {
                foreach (var entry in _table) entry!.Gateway = _gatewayOf(entry.Rank);
                var table = new RankTable();
                table.Ranks.AddRange(_table);
                _tableReady.TrySetResult(table);
            }
        }
        return _tableReady.Task.WaitAsync(cancellationToken);
    }

    /// <summary>The master's JobControl service as the job's ranks call it.</summary>
    private sealed class MasterJobControl(LoopbackGrpcJob job) : JobControl.JobControlBase
    {
        public override Task<RankTable> Register(RegisterRequest request, ServerCallContext context) => job.RegisterAsync(request, context.CancellationToken);

        public override Task<AbortReply> Abort(AbortRequest request, ServerCallContext context)
        {
            job.Abort(new MpiException(ErrorClass.Aborted, $"Rank {request.Rank} aborted the job: {request.Reason}") { AbortCode = request.ErrorCode });
            return Task.FromResult(new AbortReply());
        }
    }
}
