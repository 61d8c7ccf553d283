using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Pmpi.Agent.Internal;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Master;

/// <summary>
/// The JobControl service: where a running job's ranks register to learn each other's endpoints, spawn ranks, say
/// they linked to a spawned world, and abort the job. Ranks hold no cluster credential: they prove their job with its
/// key, which is inside each request, so a request is read before its caller is known (<see cref="MaxRequestSize"/>).
/// </summary>
internal sealed class JobControlService(RunningJobs jobs, CallGuard guard) : JobControl.JobControlBase
{
    /// <summary>
    /// Register, Abort, Spawn and Linked carry a few hundred bytes (a spawn's arguments a few more); 1 MB leaves room
    /// for an abort's long exception message, and keeps a caller without the job key from making the master buffer more.
    /// </summary>
    public const int MaxRequestSize = 1024 * 1024;

    public override Task<RankTable> Register(RegisterRequest request, ServerCallContext context) =>
        JobOf(request.JobId, request.JobToken, context, ServicePaths.Register).RegisterAsync(request, context.CancellationToken);

    public override Task<AbortReply> Abort(AbortRequest request, ServerCallContext context)
    {
        JobOf(request.JobId, request.JobToken, context, ServicePaths.Abort).Fail(request.Rank, request.ErrorCode, request.Reason);
        return Task.FromResult(new AbortReply());
    }

    public override Task<RankTable> Spawn(SpawnRequest request, ServerCallContext context) =>
        JobOf(request.JobId, request.JobToken, context, ServicePaths.Spawn).SpawnAsync(request, context.CancellationToken);

    public override Task<LinkedReply> Linked(LinkedRequest request, ServerCallContext context)
    {
        JobOf(request.JobId, request.JobToken, context, ServicePaths.Linked).Linked(request);
        return Task.FromResult(new LinkedReply());
    }

    /// <summary>
    /// The job a rank's call names, once its key is proven. An unknown job and a wrong key get the same status and
    /// message (PERMISSION_DENIED, logged), so a caller cannot probe which jobs run here (docs/security.md).
    /// </summary>
    private JobRun JobOf(string jobId, string token, ServerCallContext context, string method)
    {
        HttpContext call = context.GetHttpContext();
        if (!jobs.TryGet(jobId, out var job) || !JobTickets.TokenMatches(job.Token, token))
            throw guard.Refuse(call, method, StatusCode.PermissionDenied, $"job {jobId} does not run on this master, or its key is not the one given");
        // Ranks hold no certificate: the key is their proof, and keeps their connection from being shed for others.
        AdmittedConnection.MarkAuthenticated(call);
        return job;
    }
}
