using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Agent.Master;

/// <summary>
/// The gateways a job talks through, as its master sees them. Rank streams between domains that do not reach each
/// other directly go through both domains' gateways; so does control: the master reaches an agent (and a gateway) of
/// a domain its own does not reach directly through its own domain's gateway, and such a domain's ranks reach the
/// master through theirs (<see cref="ControlRoute"/>). A master serving no domain (`pmpi agent` without --domain)
/// dials every agent directly, as its ranks dial it. The job is registered with each of these gateways (ticket, rank
/// table, where the master is) before any rank launches, again with the endpoints before the ranks get the table,
/// and removed when it ends: first and last with the master's own, which relays the registrations for the others.
/// </summary>
internal sealed class JobGateways
{
    private static readonly TimeSpan CallDeadline = TimeSpan.FromSeconds(10);

    private readonly RpcSecurity _security;
    private readonly string _jobId;
    private readonly Uri _master;
    private readonly string _masterDomain;
    private readonly string _masterGateway;
    private readonly JobRoutes _routes;
    private readonly IReadOnlyList<(string Domain, string Address)> _gateways; // the master's own first

    private JobGateways(string jobId, Uri master, string masterDomain, string masterGateway, JobRoutes routes,
        IReadOnlyList<(string Domain, string Address)> gateways, RpcSecurity security)
    {
        (_jobId, _master, _masterDomain, _masterGateway, _routes, _gateways, _security) = (jobId, master, masterDomain, masterGateway, routes, gateways, security);
    }

    /// <summary>
    /// The gateways of job <paramref name="jobId"/>, laid out as <paramref name="table"/>: both ends' of every pair of
    /// its domains whose ranks do not reach each other directly (the ranks' own rule, <see cref="JobRoutes"/>), and, for every
    /// domain the master and its ranks do not reach each other directly, that domain's and the master's.
    /// </summary>
    /// <param name="jobId">The job.</param>
    /// <param name="table">Every rank's domain and gateway, and which domains reach which.</param>
    /// <param name="master">The master's address, where ranks register.</param>
    /// <param name="masterDomain">The master's own domain (its agent's --domain); empty when none.</param>
    /// <param name="masterGateway">The gateway of <paramref name="masterDomain"/> (https://host:port), as the computation declares it; empty when none.</param>
    /// <param name="security">How the master dials gateways and agents.</param>
    /// <exception cref="ArgumentException">A domain the job needs a gateway of has none; the message names it.</exception>
    public static JobGateways For(string jobId, RankTable table, Uri master, string masterDomain, string masterGateway, RpcSecurity security)
    {
        ArgumentNullException.ThrowIfNull(table);
        var gatewayOf = table.Ranks.GroupBy(entry => entry.Domain, StringComparer.Ordinal).ToDictionary(group => group.Key, group => group.First().Gateway, StringComparer.Ordinal);
        var routes = JobRoutes.FromTable(table);
        var relayed = gatewayOf.Keys.SelectMany(from => gatewayOf.Keys.Where(to => !routes.Reaches(from, to)).SelectMany(to => new[] { from, to }));
        var controlled = masterDomain.Length == 0 ? [] : gatewayOf.Keys.Where(domain => domain.Length > 0
            && !(routes.Reaches(masterDomain, domain) && routes.Reaches(domain, masterDomain))).ToList();
        if (controlled.Count > 0)
        {
            if (masterGateway.Length == 0)
                throw new ArgumentException($"the master serves domain '{masterDomain}', which the computation declares no gateway for, so it cannot reach domain '{controlled[0]}': declare <domain name=\"{masterDomain}\" gateway=\"host:port\"/>");
            gatewayOf[masterDomain] = masterGateway;
        }
        var gateways = relayed.Concat(controlled).Concat(controlled.Count > 0 ? [masterDomain] : []).Distinct()
            .Where(domain => gatewayOf[domain].Length > 0)
            .OrderBy(domain => domain != masterDomain).ThenBy(domain => domain, StringComparer.Ordinal)
            .Select(domain => (domain, gatewayOf[domain])).ToList();
        return new JobGateways(jobId, master, masterDomain, masterGateway, routes, gateways, security);
    }

    /// <summary>1 when the master's own gateway is among them (it leads the list, since it relays for the others), else 0.</summary>
    private int OwnCount => _gateways.Count > 0 && _gateways[0].Domain == _masterDomain ? 1 : 0;

    /// <summary>Whether the job's ranks and master reach each other without gateways.</summary>
    public bool IsEmpty => _gateways.Count == 0;

    /// <summary>A channel to the agent at <paramref name="agent"/>, of <paramref name="domain"/>: direct, or through the master's gateway.</summary>
    public GrpcChannel AgentChannel(Uri agent, string domain) => RpcChannels.For(FirstHopTo(agent, domain), _security,
        metadata: Reaches(_masterDomain, domain) ? null : ControlRoute.ToAgent(_jobId, agent.Authority));

    /// <summary>What <see cref="AgentChannel"/> dials: the agent, or the master's gateway.</summary>
    public Uri FirstHopTo(Uri agent, string domain) => Reaches(_masterDomain, domain) ? agent : new Uri(_masterGateway);

    /// <summary>How errors name the way to an agent of <paramref name="domain"/>: nothing when dialed directly, else ", via gateways A -> B".</summary>
    public string WayToAgent(string domain) => Reaches(_masterDomain, domain)
        ? ""
        : $", via gateways {_masterGateway} -> {_gateways.FirstOrDefault(gateway => gateway.Domain == domain).Address}";

    /// <summary>The gateway the ranks of <paramref name="domain"/> reach the master through (their own); empty when they dial it directly.</summary>
    public string MasterGatewayFor(string domain, string domainGateway) => Reaches(domain, _masterDomain) ? "" : domainGateway;

    /// <summary>
    /// Whether calls from <paramref name="from"/> reach <paramref name="to"/> without gateways: as the ranks' rule
    /// says (<see cref="JobRoutes.Reaches"/>), and always where either end serves no domain (a flat network).
    /// </summary>
    private bool Reaches(string from, string to) => from.Length == 0 || to.Length == 0 || _routes.Reaches(from, to);

    /// <summary>
    /// Registers the job with every gateway: the master's own first, then the others at once. <paramref name="spawned"/>
    /// are the tickets of the worlds its ranks spawned, whose ranks follow the first world's in <paramref name="table"/>.
    /// </summary>
    /// <returns>Null when all accepted it; otherwise why the first one did not, naming its domain and address.</returns>
    public async Task<string?> RegisterAsync((ByteString Ticket, ByteString Signature) ticket, IEnumerable<SignedTicket> spawned, RankTable table, CancellationToken cancellationToken)
    {
        var request = new RegisterJobRequest
        {
            Ticket = ticket.Ticket, TicketSignature = ticket.Signature, Table = table, Spawned = { spawned },
            MasterAddress = _master.ToString(), MasterDomain = _masterDomain, MasterGateway = _masterGateway,
        };
        int own = OwnCount;
        if (own == 1 && await RegisterAsync(_gateways[0], request, cancellationToken).ConfigureAwait(false) is { } refused) return refused;
        var failures = await Task.WhenAll(_gateways.Skip(own).Select(gateway => RegisterAsync(gateway, request, cancellationToken))).ConfigureAwait(false);
        return failures.FirstOrDefault(failure => failure is not null);
    }

    private async Task<string?> RegisterAsync((string Domain, string Address) gateway, RegisterJobRequest request, CancellationToken cancellationToken)
    {
        try
        {
            using var channel = GatewayChannel(gateway);
            await new GatewayClient(channel).RegisterJobAsync(request, deadline: DateTime.UtcNow + CallDeadline, cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
            return null;
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.Cancelled && cancellationToken.IsCancellationRequested)
        {
            return null; // the job ended meanwhile, for a reason already reported
        }
        catch (RpcException e)
        {
            return $"the gateway of domain '{gateway.Domain}' at {gateway.Address} did not register the job: {e.Status.Detail}";
        }
        catch (ArgumentException e)
        {
            return $"the gateway of domain '{gateway.Domain}' at {gateway.Address} cannot be called: {e.Message}";
        }
    }

    /// <summary>
    /// Removes the job from every gateway, at most <see cref="CallDeadline"/> each: the others at once, then the
    /// master's own, which relays those removals. A gateway gone already is no error.
    /// </summary>
    public async Task RemoveAsync()
    {
        int own = OwnCount;
        await Task.WhenAll(_gateways.Skip(own).Select(RemoveAsync)).ConfigureAwait(false);
        if (own == 1) await RemoveAsync(_gateways[0]).ConfigureAwait(false);
    }

    private async Task RemoveAsync((string Domain, string Address) gateway)
    {
        try
        {
            using var channel = GatewayChannel(gateway);
            await new GatewayClient(channel).RemoveJobAsync(new RemoveJobRequest { JobId = _jobId }, deadline: DateTime.UtcNow + CallDeadline).ResponseAsync.ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or ArgumentException)
        {
            // The job is over either way; a gateway that restarted has forgotten it already.
        }
    }

    /// <summary>A gateway the master's domain reaches is dialed directly; any other through the master's own.</summary>
    private GrpcChannel GatewayChannel((string Domain, string Address) gateway) => Reaches(_masterDomain, gateway.Domain)
        ? RpcChannels.For(new Uri(gateway.Address), _security)
        : RpcChannels.For(new Uri(_masterGateway), _security, metadata: ControlRoute.ToGateway(_jobId, gateway.Domain));
}
