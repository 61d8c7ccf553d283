using Google.Protobuf;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>
/// A launched rank's job control, through its job's master: registering the rank's endpoint (the rendezvous that
/// answers with the rank table) and reporting an abort.
/// </summary>
internal sealed class MasterClient(RankIdentity identity) : IJobControl, IDisposable
{
    private static readonly TimeSpan RegistrationTimeout = TimeSpan.FromMinutes(2);
    private static readonly TimeSpan AbortTimeout = TimeSpan.FromSeconds(5);

    private readonly RpcChannel _channel = new(identity.Master, security: identity.MasterSecurity);

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
            table = await _channel.UnaryAsync<RegisterRequest, RankTable>(ServicePaths.Register, new RegisterRequest
            {
                JobId = identity.JobId,
                JobToken = identity.JobToken,
                Rank = identity.Rank,
                Endpoint = endpoint?.ToString() ?? "",
                Domain = identity.Domain ?? "",
                CertificateSha256 = ByteString.CopyFrom(certificatePin),
            }, RegistrationTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Rank {identity.Rank} could not register with the master at {identity.Master}: {e.Message}", e);
        }
        if (table.Ranks.Count != identity.Size)
            throw new MpiException(ErrorClass.Transport, $"The master returned a table of {table.Ranks.Count} ranks for a job of {identity.Size}.");
        return table;
    }

    public void Abort(MpiException reason)
    {
        try
        {
            _channel.UnaryAsync<AbortRequest, AbortReply>(ServicePaths.Abort, new AbortRequest
            {
                JobId = identity.JobId,
                JobToken = identity.JobToken,
                Rank = identity.Rank,
                ErrorCode = reason.AbortCode ?? 1,
                Reason = reason.Message,
            }, AbortTimeout).GetAwaiter().GetResult();
        }
        catch (RpcException)
        {
            // The master is gone or slow; the rank's exit code still tells its agent.
        }
    }

    public void Dispose() => _channel.Dispose();
}
