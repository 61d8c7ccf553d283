using Pmpi.Devices.Grpc;
using Pmpi.Routing;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>A rank process an agent launched, joined to its job: its gRPC device and its master.</summary>
internal sealed class LaunchedRank : IRankSpawner, IDisposable
{
    private LaunchedRank(GrpcDevice device, MasterClient master, SpawnedWorld? spawnedBy)
    {
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
            try
            {
                device.Connect(JobRoutes.FromTable(table), [.. Enumerable.Range(identity.WorldFirst, identity.Size), .. spawnedBy?.Parents ?? []]);
            }
            catch (MpiException e)
            {
                master.Abort(new MpiException(ErrorClass.Aborted, $"Rank {identity.Rank} failed: {e.Message}", e) { AbortCode = 1 });
                throw;
            }
            if (!table.Unbound) BindToCore(identity, table);
            if (identity.Table is not null && !RankHeartbeat.ReportJoined())
                throw new MpiException(ErrorClass.Transport, $"Rank {identity.Rank} cannot tell its agent that it joined job {identity.JobId}: its heartbeat pipe is closed.");
            return new LaunchedRank(device, master, spawnedBy);
        }
        catch
        {
            master.Dispose();
            device.Dispose();
            throw;
        }
    }

    /// <summary>Binds this rank to a core of its own when its node has one for each of the job's ranks there (<see cref="CoreBinding"/>).</summary>
    private static void BindToCore(RankIdentity identity, RankTable table)
    {
        var mine = table.Ranks[identity.Rank];
        var onNode = table.Ranks.Where(entry => entry.Node == mine.Node && entry.Domain == mine.Domain).ToList();
        CoreBinding.Bind(identity.JobId, onNode.IndexOf(mine), onNode.Count);
    }

    public RankTable Spawn(SpawnRequest request) => Master.SpawnAsync(request, CancellationToken.None).GetAwaiter().GetResult();

    public void Connect(RankTable table) =>
        Device.Connect(JobRoutes.FromTable(table), Enumerable.Range(table.Spawned.First, table.Spawned.Size));

    public void Release(int worldFirst) => Master.LinkedAsync(worldFirst, CancellationToken.None).GetAwaiter().GetResult();

    /// <summary>Closes the rank's streams and endpoint, then its line to the master.</summary>
    public void Dispose()
    {
        Device.Dispose();
        Master.Dispose();
    }
}
