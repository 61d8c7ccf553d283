using Google.Protobuf;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Services;

/// <summary>
/// The gateways of the domains a job spans, as its master talks to them: the job is registered with each (ticket and
/// rank table) before any rank launches, again with the endpoints before the ranks get the table, and removed when it
/// ends. A job within one domain has none.
/// </summary>
internal sealed class JobGateways(IReadOnlyList<(string Domain, string Address)> gateways, RpcSecurity security)
{
    private static readonly TimeSpan CallDeadline = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The gateways on the routes of <paramref name="table"/>: both ends' of every pair of its domains whose ranks
    /// do not reach each other directly (the ranks' own rule, Routing/JobRoutes); none for a job within one domain.
    /// </summary>
    public static JobGateways For(RankTable table, RpcSecurity security)
    {
        ArgumentNullException.ThrowIfNull(table);
        var gatewayOf = table.Ranks.GroupBy(entry => entry.Domain, StringComparer.Ordinal).ToDictionary(group => group.Key, group => group.First().Gateway, StringComparer.Ordinal);
        var reachable = table.Reach.SelectMany(reach => reach.Reachable.Select(to => (reach.Domain, to))).ToHashSet();
        var relayed = gatewayOf.Keys.SelectMany(from => gatewayOf.Keys.Where(to => to != from && !reachable.Contains((from, to))).SelectMany(to => new[] { from, to }));
        return new JobGateways([.. relayed.Distinct().Where(domain => gatewayOf[domain].Length > 0).Order(StringComparer.Ordinal).Select(domain => (domain, gatewayOf[domain]))], security);
    }

    /// <summary>Whether the job's ranks reach each other without gateways.</summary>
    public bool IsEmpty => gateways.Count == 0;

    /// <summary>Registers the job with every gateway at once.</summary>
    /// <returns>Null when all accepted it; otherwise why the first one did not, naming its domain and address.</returns>
    public async Task<string?> RegisterAsync((ByteString Ticket, ByteString Signature) ticket, RankTable table, CancellationToken cancellationToken)
    {
        var request = new RegisterJobRequest { Ticket = ticket.Ticket, TicketSignature = ticket.Signature, Table = table };
        var failures = await Task.WhenAll(gateways.Select(async gateway =>
        {
            try
            {
                using var channel = new RpcChannel(new Uri(gateway.Address), security: security);
                await channel.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, request, CallDeadline, cancellationToken).ConfigureAwait(false);
                return null;
            }
            catch (RpcException e)
            {
                return $"the gateway of domain '{gateway.Domain}' at {gateway.Address} did not register the job: {e.Detail}";
            }
            catch (ArgumentException e)
            {
                return $"the gateway of domain '{gateway.Domain}' at {gateway.Address} cannot be called: {e.Message}";
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return null; // the job ended meanwhile, for a reason already reported
            }
        })).ConfigureAwait(false);
        return failures.FirstOrDefault(failure => failure is not null);
    }

    /// <summary>Removes the job from every gateway, at once and at most <see cref="CallDeadline"/>; a gateway gone already is no error.</summary>
    public async Task RemoveAsync(string jobId) => await Task.WhenAll(gateways.Select(async gateway =>
    {
        try
        {
            using var channel = new RpcChannel(new Uri(gateway.Address), security: security);
            await channel.UnaryAsync<RemoveJobRequest, RemoveJobReply>(ServicePaths.RemoveJob, new RemoveJobRequest { JobId = jobId }, CallDeadline).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or ArgumentException)
        {
            // The job is over either way; a gateway that restarted has forgotten it already.
        }
    })).ConfigureAwait(false);
}
