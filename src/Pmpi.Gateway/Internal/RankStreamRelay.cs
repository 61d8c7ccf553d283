using System.Globalization;
using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using Yarp.ReverseProxy.Forwarder;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// Serves RankTransport.Connect by relaying it with YARP's <see cref="IHttpForwarder"/>: the request headers state the
/// job and both ranks with a proof under the job key (<see cref="RouteProof"/>), checked against a registered job
/// before a body byte is read. A stream from a rank of this domain goes on to the destination domain's gateway; a
/// stream for a rank of this domain goes to that rank's endpoint. Anything else is refused with a gRPC status and
/// logged. The destination rank still checks the Hello inside the stream.
/// </summary>
internal sealed class RankStreamRelay(HopForwarder forwarder, JobDirectory jobs, HopClients clients, GatewayCounters counters, GatewayOptions options)
{
    private const string Method = "RankTransport.Connect";

    public async Task RelayAsync(HttpContext context)
    {
        if (!HopForwarder.IsGrpc(context)) return;
        if (!TryChooseHop(context, out var hop, out var route, out var refusal))
        {
            forwarder.Refuse(context, Method, refusal.Code, refusal.Detail);
            return;
        }
        // The route proof (or a cluster certificate) is the caller's proof: its connection is not shed for others.
        AdmittedConnection.MarkAuthenticated(context);
        counters.StreamOpened();
        context.Request.Body = new CountingStream(context.Request.Body, counters);
        context.Response.Body = new CountingStream(context.Response.Body, counters);
        try
        {
            await forwarder.ForwardAsync(context, hop, route).ConfigureAwait(false);
        }
        finally
        {
            counters.StreamClosed();
        }
    }

    /// <summary>Where a stream goes next, or why it is refused.</summary>
    private bool TryChooseHop(HttpContext context, out Hop hop, out string route, out (StatusCode Code, string Detail) refusal)
    {
        hop = default;
        route = "";
        if (!RouteProof.TryRead(context.Request.Headers.Lookup(), out var jobId, out int source, out int destination, out var proof, out var malformed))
        {
            refusal = (StatusCode.InvalidArgument, $"{malformed}; a stream through a gateway states its route in {RouteProof.JobHeader}, {RouteProof.SourceHeader}, {RouteProof.DestinationHeader} and {RouteProof.ProofHeader}");
            return false;
        }
        // An unknown job and a wrong proof are refused alike, so a caller cannot probe which jobs are registered.
        if (!jobs.TryGet(jobId, out var job) || !RouteProof.Matches(job.Token, jobId, source, destination, proof))
        {
            refusal = (StatusCode.PermissionDenied, $"job '{jobId}' is not registered here, or the route proof for rank {source} -> rank {destination} does not match its key");
            return false;
        }
        var table = job.Table;
        if (source >= table.Ranks.Count || destination >= table.Ranks.Count || source == destination)
        {
            refusal = (StatusCode.NotFound, $"job {jobId} has no route from rank {source} to rank {destination} ({table.Ranks.Count} ranks)");
            return false;
        }
        var from = table.Ranks[source];
        var to = table.Ranks[destination];
        route = $"job {jobId}: rank {source} ({DomainName(from)}) -> rank {destination} ({DomainName(to)})";
        if (to.Domain == options.Domain)
        {
            // The last hop. A stream from another domain must arrive from that domain's gateway, a cluster member.
            if (from.Domain != options.Domain && !options.Security!.TryAuthenticate(context, out var failure))
            {
                refusal = (StatusCode.Unauthenticated, $"{route} comes from another domain but not from a cluster member ({failure})");
                return false;
            }
            if (to.Endpoint.Length == 0)
            {
                refusal = (StatusCode.Unavailable, $"{route}: rank {destination} has not registered its endpoint with this gateway");
                return false;
            }
            hop = new Hop($"rank {destination} at", to.Endpoint, clients.ForRank(to.Endpoint, to.CertificateSha256.Span));
        }
        else if (from.Domain == options.Domain)
        {
            if (to.Gateway.Length == 0)
            {
                refusal = (StatusCode.FailedPrecondition, $"{route}: {DomainName(to)} has no gateway");
                return false;
            }
            hop = new Hop($"the gateway of {DomainName(to)} at", to.Gateway, clients.ForGateway(to.Domain, to.Gateway));
        }
        else
        {
            refusal = (StatusCode.FailedPrecondition, $"{route}: neither rank is in domain '{options.Domain}', which this gateway serves");
            return false;
        }
        refusal = default;
        return true;
    }

    internal static string DomainName(RankEntry entry) => entry.Domain.Length == 0 ? "no domain" : $"domain '{entry.Domain}'";
}
