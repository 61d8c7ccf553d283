using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc.Security;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// Relays control calls between domains (<see cref="ControlRoute"/>): a master's Launch, Kill and uploads to an agent of
/// another domain, its RegisterJob and RemoveJob to another domain's gateway, and a rank's Register, Abort, Spawn and
/// Linked to a master of another domain. Like a rank stream, a call goes from the gateway of the domain it starts in
/// to the gateway of the domain it ends in, then to its destination; it is relayed only for a job registered here,
/// only a method its destination serves, and only from a cluster member or, for a call to the master, a rank proving
/// the job key. A call for this gateway itself is served here, as any other call to it.
/// </summary>
internal sealed class ControlRelay(HopForwarder forwarder, JobDirectory jobs, HopClients clients, GatewayCounters counters, GatewayOptions options)
{
    /// <summary>Middleware: relays a request that states a control route; passes any other on.</summary>
    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var headers = context.Request.Headers;
        // A request states a control route by naming its destination at all.
        if (!headers.ContainsKey(ControlRoute.DestinationHeader))
        {
            await next(context).ConfigureAwait(false);
            return;
        }
        if (!HopForwarder.IsGrpc(context)) return;
        var method = context.Request.Path.Value ?? "";
        if (!ControlRoute.TryRead(headers.Lookup(), out var jobId, out var target, out var name, out int source, out var malformed))
        {
            forwarder.Refuse(context, method, StatusCode.InvalidArgument, $"{malformed}; a control call through a gateway states its route in {RouteProof.JobHeader} and {ControlRoute.DestinationHeader}");
            return;
        }
        if (target == ControlTarget.Gateway && name == options.Domain)
        {
            await next(context).ConfigureAwait(false);
            return;
        }
        if (!TryChooseHop(context, method, jobId, target, name, source, out var hop, out var route, out var refusal))
        {
            forwarder.Refuse(context, method, refusal.Code, refusal.Detail);
            return;
        }
        AdmittedConnection.MarkAuthenticated(context);
        counters.ControlCallRelayed();
        await forwarder.ForwardAsync(context, hop, route).ConfigureAwait(false);
    }

    /// <summary>Where a control call goes next, or why it is refused.</summary>
    private bool TryChooseHop(HttpContext context, string method, string jobId, ControlTarget target, string name, int source,
        out Hop hop, out string route, out (StatusCode Code, string Detail) refusal)
    {
        hop = default;
        route = "";
        if (!ControlRoute.Serves(target, method))
        {
            refusal = (StatusCode.PermissionDenied, $"{method} is not a method relayed to {(target == ControlTarget.Master ? "a master" : $"{target.ToString().ToLowerInvariant()} {name}")}");
            return false;
        }
        // One read of the registration: a renewal may replace it meanwhile.
        var registration = jobs.TryGet(jobId, out var job) ? job.Registration : null;
        var table = registration?.Table;
        // An unknown job and a wrong proof are refused alike, so a caller cannot probe which jobs are registered.
        if (registration is null || table is null || (target == ControlTarget.Master
            && (source >= table.Ranks.Count || !ControlRoute.ProvesMasterCall(context.Request.Headers.Lookup(), job.Token, jobId, source))))
        {
            refusal = (StatusCode.PermissionDenied, $"job '{jobId}' is not registered here{(target == ControlTarget.Master ? $", or the route proof of rank {source} does not match its key" : "")}");
            return false;
        }
        bool member = options.Security!.TryAuthenticate(context, out var notMember);
        // Where the call starts (the master's domain, or the calling rank's) and ends, and the address at its end.
        string origin, domain, address;
        switch (target)
        {
            case ControlTarget.Agent:
                var agent = job.Agents.FirstOrDefault(agent => agent.Agent == name);
                if (agent is null || agent.Ranks.Count == 0 || agent.Ranks[0] >= table.Ranks.Count)
                {
                    refusal = (StatusCode.NotFound, $"the ticket of job {jobId} names no agent at {name}");
                    return false;
                }
                (origin, domain, address) = (registration.MasterDomain, table.Ranks[agent.Ranks[0]].Domain, options.Security!.AddressOf(name).GetLeftPart(UriPartial.Authority));
                route = $"job {jobId}: {method} for the agent at {name} (domain '{domain}')";
                break;
            case ControlTarget.Gateway:
                (origin, domain, address) = (registration.MasterDomain, name, GatewayOf(registration, name));
                route = $"job {jobId}: {method} for domain '{name}'";
                break;
            default:
                (origin, domain) = (table.Ranks[source].Domain, registration.MasterDomain);
                address = Uri.TryCreate(registration.MasterAddress, UriKind.Absolute, out var master) ? master.GetLeftPart(UriPartial.Authority) : "";
                route = $"job {jobId}: {method} from rank {source} ({OpaqueRelay.DomainName(table.Ranks[source])}) for the master (domain '{domain}')";
                break;
        }
        // Only a rank's call to its master may come from a caller holding no cluster credential, and only from this domain.
        if (!member && (target != ControlTarget.Master || origin != options.Domain))
        {
            refusal = (StatusCode.Unauthenticated, $"{route} does not come from a cluster member ({notMember})");
            return false;
        }
        switch (JobRoutes.HopAt(options.Domain, origin, domain))
        {
            case GatewayHop.Deliver when address.Length == 0:
                refusal = (StatusCode.FailedPrecondition, $"{route}: the master registered no valid address of its own");
                return false;
            case GatewayHop.Deliver:
                hop = new Hop(target == ControlTarget.Agent ? "the agent at" : "the master at", address, clients.ForMember(address));
                break;
            case GatewayHop.ToDestinationGateway:
                var gateway = target == ControlTarget.Master ? registration.MasterGateway : GatewayOf(registration, domain);
                if (gateway.Length == 0)
                {
                    refusal = (StatusCode.FailedPrecondition, $"{route}: domain '{domain}' has no gateway");
                    return false;
                }
                hop = new Hop($"the gateway of domain '{domain}' at", gateway, clients.ForGateway(domain, gateway));
                break;
            default:
                refusal = (StatusCode.FailedPrecondition, $"{route}: neither end is in domain '{options.Domain}', which this gateway serves");
                return false;
        }
        refusal = default;
        return true;
    }

    /// <summary>The gateway of a domain of the job (its ranks' or its master's); empty when the job names none.</summary>
    private static string GatewayOf(Rpc.V1.RegisterJobRequest registration, string domain) =>
        domain == registration.MasterDomain && registration.MasterGateway.Length > 0 ? registration.MasterGateway
            : registration.Table.Ranks.FirstOrDefault(entry => entry.Domain == domain)?.Gateway ?? "";
}
