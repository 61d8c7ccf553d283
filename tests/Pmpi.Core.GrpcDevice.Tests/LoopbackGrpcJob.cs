using System.Net;
using Pmpi.Devices;
using Pmpi.Devices.Grpc;
using Pmpi.Hosting;
using Pmpi.Rpc;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests;

/// <summary>
/// A job whose ranks are threads of the test process, each with a real <see cref="GrpcDevice"/>: its own Kestrel
/// endpoint, registration with a master, and HTTP/2 streams to its peers over loopback. The master here does what a
/// PMPI master does for rendezvous and abort (answers every rank with the table once all registered; turns one
/// rank's Abort into every rank's), without agents or processes, so the core suite runs unchanged on the wire.
/// </summary>
internal sealed class LoopbackGrpcJob : IThreadedJob
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly RpcServer _master;
    private readonly RankEntry?[] _table;
    private readonly GrpcDevice?[] _devices;
    private readonly TaskCompletionSource<RankTable> _tableReady = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _lock = new();
    private readonly bool _encryptStreams;
    private MpiException? _aborted;
    private int _registered;

    /// <param name="size">Ranks in the job.</param>
    /// <param name="encryptStreams">Whether the ranks' endpoints speak TLS with pinned certificates, as they do beyond loopback.</param>
    public LoopbackGrpcJob(int size, bool encryptStreams = false)
    {
        _encryptStreams = encryptStreams;
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        _table = new RankEntry?[size];
        _devices = new GrpcDevice?[size];
        _master = RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
        {
            endpoints.MapGrpcUnary<RegisterRequest, RankTable>(ServicePaths.Register, (request, call) => RegisterAsync(request, call.CancellationToken));
            endpoints.MapGrpcUnary<AbortRequest, AbortReply>(ServicePaths.Abort, (request, _) =>
            {
                Abort(new MpiException(ErrorClass.Aborted, $"Rank {request.Rank} aborted the job: {request.Reason}") { AbortCode = request.ErrorCode });
                return Task.FromResult(new AbortReply());
            });
        }).WaitAsync(StartTimeout).GetAwaiter().GetResult();
    }

    public int Size => _table.Length;

    public string JobId { get; } = $"test-{Guid.NewGuid():N}";

    /// <summary>The job's secret, which ranks present to each other.</summary>
    public string JobToken { get; } = Guid.NewGuid().ToString("N");

    public IDevice DeviceFor(int rank)
    {
        var identity = new RankIdentity(JobId, rank, Size, _master.Address, JobToken, Domain: null, BindAddress: "127.0.0.1") { EncryptStreams = _encryptStreams };
        var device = GrpcDevice.StartAsync(identity, CancellationToken.None).WaitAsync(StartTimeout).GetAwaiter().GetResult();
        lock (_lock)
        {
            _devices[rank] = device;
            // A rank may fail before a slower one got here; that one must still see the abort, as in a real job.
            if (_aborted is not null) device.Engine.Abort(_aborted);
        }
        return device;
    }

    /// <summary>The device <see cref="DeviceFor"/> made for <paramref name="rank"/>, if it was made.</summary>
    public GrpcDevice? Started(int rank)
    {
        lock (_lock) return _devices[rank];
    }

    public void Abort(MpiException reason)
    {
        _tableReady.TrySetException(reason);
        GrpcDevice?[] devices;
        lock (_lock)
        {
            _aborted ??= reason;
            devices = [.. _devices];
        }
        foreach (var device in devices) device?.Engine.Abort(reason);
    }

    public void Dispose()
    {
        GrpcDevice?[] devices;
        lock (_lock) devices = [.. _devices];
        // In parallel: each device closes its streams and waits briefly for its peers to see the end.
        Task.WaitAll([.. devices.OfType<GrpcDevice>().Select(device => Task.Run(device.Dispose))], StartTimeout);
        _master.DisposeAsync().AsTask().WaitAsync(StartTimeout).GetAwaiter().GetResult();
    }

    private Task<RankTable> RegisterAsync(RegisterRequest request, CancellationToken cancellationToken)
    {
        if (request.JobId != JobId || request.JobToken != JobToken) throw new RpcException(StatusCode.PermissionDenied, $"Rank {request.Rank} registered for another job.");
        lock (_lock)
        {
            _table[request.Rank] = new RankEntry { Rank = request.Rank, Endpoint = request.Endpoint, Domain = request.Domain, CertificateSha256 = request.CertificateSha256 };
            if (++_registered == Size)
            {
                var table = new RankTable();
                table.Ranks.AddRange(_table);
                _tableReady.TrySetResult(table);
            }
        }
        return _tableReady.Task.WaitAsync(cancellationToken);
    }
}
