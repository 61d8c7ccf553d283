using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Internal;

/// <summary>The Gateway service (gateway.proto): masters register and remove jobs; members read the counters.</summary>
internal sealed class GatewayService(JobDirectory jobs, TunnelListener tunnels, GatewayCounters counters, GatewayOptions options,
    RefusalLog refusals, ILogger<GatewayService> logger) : Rpc.V1.Gateway.GatewayBase
{
    /// <summary>What a member can make the gateway buffer per call: a job's rank table, up to the message limit of PMPI's other calls.</summary>
    public const int MaxRequestSize = RpcOptions.DefaultMaxMessageSize;

    public override Task<RegisterJobReply> RegisterJob(RegisterJobRequest request, ServerCallContext context)
    {
        var call = context.GetHttpContext();
        RegisteredJob job;
        try
        {
            job = jobs.Register(request);
        }
        catch (RpcException e)
        {
            GatewayLog.Refused(logger, refusals, call, ServicePaths.RegisterJob, $"{ServicePaths.RegisterJob} calls ({e.StatusCode})", e.Status.Detail);
            throw;
        }
        GatewayLog.JobRegistered(logger, job.Id, call.Peer(), job.Table.Ranks.Count, job.Table.Ranks.Count(entry => entry.Domain == options.Domain));
        return Task.FromResult(new RegisterJobReply());
    }

    public override Task<RemoveJobReply> RemoveJob(RemoveJobRequest request, ServerCallContext context)
    {
        if (jobs.Remove(request.JobId)) GatewayLog.JobRemoved(logger, request.JobId, context.GetHttpContext().Peer());
        return Task.FromResult(new RemoveJobReply());
    }

    public override Task<GatewayStatus> GetStatus(GetStatusRequest request, ServerCallContext context) => Task.FromResult(new GatewayStatus
    {
        Domain = options.Domain,
        Jobs = jobs.Count,
        StreamsOpen = counters.StreamsOpen,
        StreamsRelayed = counters.StreamsRelayed,
        BytesRelayed = counters.BytesRelayed,
        StreamsRefused = counters.StreamsRefused,
        ControlCallsRelayed = counters.ControlCallsRelayed,
        TunnelsOpen = tunnels.Open,
    });

    /// <summary>Refuses the call with UNAUTHENTICATED, logged, unless its caller is a cluster member (<see cref="CallerChecks.RequireCaller"/>).</summary>
    public void RequireMember(HttpContext call, string method)
    {
        if (options.Security!.TryAuthenticate(call, out var failure)) return;
        GatewayLog.Refused(logger, refusals, call, method, $"{method} calls ({StatusCode.Unauthenticated})", failure);
        throw new RpcException(new Status(StatusCode.Unauthenticated, $"{method} refused: {failure}."));
    }
}
