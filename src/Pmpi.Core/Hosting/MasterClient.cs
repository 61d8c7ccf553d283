using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>
/// A launched rank's job control, through its job's master: registering the rank's endpoint (the rendezvous that
/// answers with the rank table), spawning ranks, and reporting an abort.
/// </summary>
internal sealed class MasterClient(RankIdentity identity) : IJobControl, IDisposable
{
    private static readonly TimeSpan RegistrationTimeout = TimeSpan.FromMinutes(2);
    private static readonly TimeSpan AbortTimeout = TimeSpan.FromSeconds(5);

    // Made at the first call: a rank of a node-local job may never call, and then loads neither gRPC for .NET nor an
    // HTTP stack. No field or constructor here names their types, so not even their assemblies are loaded until then.
    private Line? _line;

    private JobControl.JobControlClient Client => LazyInitializer.EnsureInitialized(ref _line, () => new Line(identity)).Client;

    /// <summary>How errors name the master: its address, and the gateway it is reached through.</summary>
    private string MasterName => identity.MasterGateway is { } gateway ? $"the master at {identity.Master} (through the gateway at {gateway})" : $"the master at {identity.Master}";

    /// <summary>
    /// Registers this rank's <paramref name="endpoint"/> (null when it serves none: a job all on one node) and the
    /// SHA-256 of its TLS certificate (empty for h2c), which peers pin; answers once every rank has registered.
    /// </summary>
    /// <exception cref="MpiException">Transport: the master refused, was unreachable, or sent a table of the wrong size.</exception>
    public async Task<RankTable> RegisterAsync(Uri? endpoint, byte[] certificatePin, CancellationToken cancellationToken)
    {
        RankTable table;
        try
        {
            table = await Client.RegisterAsync(new RegisterRequest
            {
                JobId = identity.JobId,
                JobToken = identity.JobToken,
                Rank = identity.Rank,
                Endpoint = endpoint?.ToString() ?? "",
                Domain = identity.Domain ?? "",
                CertificateSha256 = ByteString.CopyFrom(certificatePin),
            }, deadline: DateTime.UtcNow + RegistrationTimeout, cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Rank {identity.Rank} could not register with {MasterName}: {StatusText.Of(e)}", e);
        }
        return Checked(identity, table);
    }

    /// <summary>The table, once it is seen to hold <paramref name="identity"/>'s world (and, for a spawned world, to say so).</summary>
    /// <exception cref="MpiException">Transport: it does not.</exception>
    public static RankTable Checked(RankIdentity identity, RankTable table)
    {
        bool spawnedHere = table.Spawned is { } spawned && spawned.First == identity.WorldFirst;
        if (table.Ranks.Count < identity.WorldFirst + identity.Size || spawnedHere != identity.WorldFirst > 0)
            throw new MpiException(ErrorClass.Transport, $"The master returned a table of {table.Ranks.Count} ranks for a world of {identity.Size} from rank {identity.WorldFirst}.");
        return table;
    }

    /// <summary>
    /// Asks the master to start <paramref name="request"/>'s ranks (MPI_Comm_spawn at its root); answers with the
    /// job's table once they have all registered. The registration timeout bounds the wait as it bounds a launch.
    /// </summary>
    /// <exception cref="MpiException">Spawn: the master refused, was unreachable, or the job ended.</exception>
    public async Task<RankTable> SpawnAsync(SpawnRequest request, CancellationToken cancellationToken)
    {
        request.JobId = identity.JobId;
        request.JobToken = identity.JobToken;
        request.Rank = identity.Rank;
        try
        {
            return await Client.SpawnAsync(request, deadline: DateTime.UtcNow + RegistrationTimeout, cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Spawn, $"Rank {identity.Rank} could not spawn {request.Count} ranks of {request.Program}: {e.Status.Detail}", e);
        }
    }

    /// <summary>Tells the master that the spawning ranks have linked to the world from <paramref name="worldFirst"/>: its ranks may start.</summary>
    /// <exception cref="MpiException">Spawn: the master refused or was unreachable.</exception>
    public async Task LinkedAsync(int worldFirst, CancellationToken cancellationToken)
    {
        try
        {
            await Client.LinkedAsync(new LinkedRequest
            {
                JobId = identity.JobId, JobToken = identity.JobToken, Rank = identity.Rank, WorldFirst = worldFirst,
            }, deadline: DateTime.UtcNow + RegistrationTimeout, cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Spawn, $"Rank {identity.Rank} could not release the ranks it spawned from rank {worldFirst}: {e.Status.Detail}", e);
        }
    }

    public void Abort(MpiException reason)
    {
        try
        {
            Client.Abort(new AbortRequest
            {
                JobId = identity.JobId,
                JobToken = identity.JobToken,
                Rank = identity.Rank,
                ErrorCode = reason.AbortCode ?? 1,
                Reason = reason.Message,
            }, deadline: DateTime.UtcNow + AbortTimeout);
        }
        catch (Exception e) when (e is RpcException or ObjectDisposedException)
        {
            // The master is gone or slow, or this rank's line to it is closed already (a Finalize whose barrier
            // failed closes it before the rank reports the failure); the rank's exit code still tells its agent.
        }
    }

    public void Dispose() => _line?.Dispose();

    /// <summary>
    /// The channel to the master, through this rank's gateway when the master serves another domain (the call then
    /// states its route).
    /// </summary>
    private sealed class Line(RankIdentity identity) : IDisposable
    {
        private readonly GrpcChannel _channel = identity.MasterGateway is { } gateway
            ? RpcChannels.For(gateway, identity.MasterSecurity, metadata: ControlRoute.ToMaster(identity.JobToken, identity.JobId, identity.Rank))
            : RpcChannels.For(identity.MasterUri, identity.MasterSecurity);

        public JobControl.JobControlClient Client => new(_channel);

        public void Dispose() => _channel.Dispose();
    }
}
