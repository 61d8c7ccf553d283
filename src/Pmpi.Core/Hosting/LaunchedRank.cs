using Pmpi.Devices.Grpc;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>A rank process an agent launched, joined to its job: its gRPC device and its master.</summary>
internal sealed class LaunchedRank : IRankSpawner, IDisposable
{
    private readonly RankIdentity _identity;
    private readonly RankTable _table;

    private LaunchedRank(RankIdentity identity, RankTable table, GrpcDevice device, MasterClient master, SpawnedWorld? spawnedBy)
    {
        _identity = identity;
        _table = table;
        Device = device;
        Master = master;
        SpawnedBy = spawnedBy;
    }

    /// <summary>The rank's endpoint and its links to every peer.</summary>
    public GrpcDevice Device { get; }

    /// <summary>The rank's job control.</summary>
    public MasterClient Master { get; }

    /// <summary>The world this rank belongs to, when ranks of the job spawned it: its parents and their intercommunicator's context.</summary>
    public SpawnedWorld? SpawnedBy { get; }

    /// <summary>
    /// Opens the rank's endpoint, registers it with the master, and routes a link to every peer from the rank table
    /// the master answers with: its world's ranks, and its parents when ranks of the job spawned it. A peer that
    /// cannot be reached is reported to the master as this rank's failure. A rank of a node-local job, given its table
    /// at launch, skips the registration (no HTTP/2 connection, the costliest step of its start) and, once linked,
    /// tells its agent instead, which tells the master.
    /// </summary>
    /// <exception cref="MpiException">Registration failed, or a peer cannot be reached; nothing was sent.</exception>
    public static async Task<LaunchedRank> StartAsync(RankIdentity identity, CancellationToken cancellationToken)
    {
        var device = GrpcDevice.Open(identity);
        var master = new MasterClient(identity);
        try
        {
            var table = identity.Table is { } given ? MasterClient.Checked(identity, given)
                : await master.RegisterAsync(device.Endpoint, device.CertificatePin, cancellationToken).ConfigureAwait(false);
            var spawnedBy = identity.WorldFirst > 0 ? table.Spawned : null;
            var peers = new List<int>(identity.Size);
            for (int rank = identity.WorldFirst; rank < identity.WorldFirst + identity.Size; rank++) peers.Add(rank);
            if (spawnedBy is not null) peers.AddRange(spawnedBy.Parents);
            try
            {
                device.Connect(table, peers);
            }
            catch (MpiException e)
            {
                master.Abort(new MpiException(ErrorClass.Aborted, $"Rank {identity.Rank} failed: {e.Message}", e) { AbortCode = 1 });
                throw;
            }
            if (identity.Table is not null && !RankHeartbeat.ReportJoined())
                throw new MpiException(ErrorClass.Transport, $"Rank {identity.Rank} cannot tell its agent that it joined job {identity.JobId}: its heartbeat pipe is closed.");
            return new LaunchedRank(identity, table, device, master, spawnedBy);
        }
        catch
        {
            master.Dispose();
            device.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Binds this process to a core of its own when its node has one for each of the job's ranks there
    /// (<see cref="CoreBinding"/>), unless the job said not to; for a rank that is the only one in its process. Says
    /// where it is bound on standard error when the job asked (mpirun's --report-bindings).
    /// </summary>
    public void BindToCore()
    {
        var mine = _table.Ranks[_identity.Rank];
        var onNode = _table.Ranks.Where(entry => entry.Node == mine.Node && entry.Domain == mine.Domain).ToList();
        int? processor = _table.Unbound ? null : CoreBinding.Bind(_identity.JobId, onNode.IndexOf(mine), onNode.Count);
        if (!_identity.ReportBindings) return;
        string binding = processor is { } bound ? $"bound to processor {bound}"
            : _table.Unbound ? "not bound (--bind-to none)"
            : onNode.Count < 2 ? "not bound (the only rank of its job on its node)"
            : $"not bound (its node has no processor of its own for each of the job's {onNode.Count} ranks there)";
        Console.Error.WriteLine($"pmpi: rank {_identity.Rank} on {System.Environment.MachineName} (process {System.Environment.ProcessId}) is {binding}");
    }

    public RankTable Spawn(SpawnRequest request) => Master.SpawnAsync(request, CancellationToken.None).GetAwaiter().GetResult();

    public void Connect(RankTable table) =>
        Device.Connect(table, Enumerable.Range(table.Spawned.First, table.Spawned.Size));

    public void Release(int worldFirst) => Master.LinkedAsync(worldFirst, CancellationToken.None).GetAwaiter().GetResult();

    /// <summary>Closes the rank's streams and endpoint, then its line to the master.</summary>
    public void Dispose()
    {
        Device.Dispose();
        Master.Dispose();
    }
}
