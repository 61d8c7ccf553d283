using Grpc.Core;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.V1;
using ServerCallContext = Pmpi.Rpc.Kestrel.ServerCallContext;

namespace Pmpi.Gateway.Internal;

/// <summary>The Gateway service (gateway.proto): masters register and remove jobs; members read the counters.</summary>
internal sealed class GatewayService(JobDirectory jobs, TunnelListener tunnels, GatewayCounters counters, GatewayOptions options,
    RefusalLog refusals, ILogger<GatewayService> logger)
{
    public void Map(IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGrpcUnary<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, RegisterJob).RequireCaller(call => RequireMember(call, "Gateway.RegisterJob"));
        endpoints.MapGrpcUnary<RemoveJobRequest, RemoveJobReply>(ServicePaths.RemoveJob, RemoveJob).RequireCaller(call => RequireMember(call, "Gateway.RemoveJob"));
        endpoints.MapGrpcUnary<GetStatusRequest, GatewayStatus>(ServicePaths.GatewayStatus, GetStatus).RequireCaller(call => RequireMember(call, "Gateway.GetStatus"));
    }

    private Task<RegisterJobReply> RegisterJob(RegisterJobRequest request, ServerCallContext call)
    {
        RegisteredJob job;
        try
        {
            job = jobs.Register(request);
        }
        catch (RpcException e)
        {
            GatewayLog.Refused(logger, refusals, call.HttpContext, "Gateway.RegisterJob", $"Gateway.RegisterJob calls ({e.StatusCode})", e.Status.Detail);
            throw;
        }
        GatewayLog.JobRegistered(logger, job.Id, call.Peer, job.Table.Ranks.Count, job.Table.Ranks.Count(entry => entry.Domain == options.Domain));
        return Task.FromResult(new RegisterJobReply());
    }

    private Task<RemoveJobReply> RemoveJob(RemoveJobRequest request, ServerCallContext call)
    {
        if (jobs.Remove(request.JobId)) GatewayLog.JobRemoved(logger, request.JobId, call.Peer);
        return Task.FromResult(new RemoveJobReply());
    }

    private Task<GatewayStatus> GetStatus(GetStatusRequest request, ServerCallContext call) => Task.FromResult(new GatewayStatus
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

    private void RequireMember(ServerCallContext call, string method)
    {
        if (options.Security!.TryAuthenticate(call.HttpContext, out var failure)) return;
        GatewayLog.Refused(logger, refusals, call.HttpContext, method, $"{method} calls ({StatusCode.Unauthenticated})", failure);
        throw new RpcException(new Status(StatusCode.Unauthenticated, $"{method} refused: {failure}."));
    }
}
