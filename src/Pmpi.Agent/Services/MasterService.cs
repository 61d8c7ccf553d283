using System.Collections.Concurrent;
using Grpc.Core;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Internal;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using ServerCallContext = Pmpi.Rpc.Kestrel.ServerCallContext;

namespace Pmpi.Agent.Services;

/// <summary>
/// The Master service: validates a submitted computation, places its ranks, launches them through the agents, is
/// where ranks register to learn each other's endpoints, and ends the job — aborting every rank when one fails.
/// </summary>
/// <param name="address">The master's own address, handed to ranks so they can register.</param>
/// <param name="localAgent">The agent that runs computations declaring no nodes (the embedded default).</param>
/// <param name="guard">Authenticates submitters (cluster members) and refuses, logging, whoever is not.</param>
/// <param name="options">The heartbeat and registration timeouts of its jobs, and the local agent's slots.</param>
internal sealed class MasterService(Func<Uri> address, Func<Uri> localAgent, CallGuard guard, AgentOptions options)
{
    // What a caller can make the master buffer per call: a computation file (at most 4 Mi characters, 3 bytes each in
    // UTF-8 at worst).
    private static readonly RpcOptions SubmitMessages = new() { MaxMessageSize = 16 * 1024 * 1024 };

    /// <summary>
    /// Register, Abort, Spawn and Linked carry a few hundred bytes (a spawn's arguments a few more); 1 MB leaves room
    /// for an abort's long exception message, and keeps a caller without the job key from making the master buffer
    /// the default 64 MB.
    /// </summary>
    private static readonly RpcOptions RankRequests = new() { MaxMessageSize = 1024 * 1024 };

    private readonly ConcurrentDictionary<string, JobRun> _jobs = new();

    public void Map(Microsoft.AspNetCore.Routing.IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGrpcServerStreaming<SubmitRequest, JobEvent>(ServicePaths.Submit, SubmitAsync, SubmitMessages)
            .RequireCaller(call => guard.RequireMember(call, ServicePaths.Submit));
        // Ranks hold no cluster credential: they prove their job with its key, which is inside the request, so the
        // request is read first; RankRequests bounds what a caller without the key can make the master buffer.
        endpoints.MapGrpcUnary<RegisterRequest, RankTable>(ServicePaths.Register, (request, call) =>
            JobOf(request.JobId, request.JobToken, call, ServicePaths.Register).RegisterAsync(request, call.CancellationToken), RankRequests);
        endpoints.MapGrpcUnary<AbortRequest, AbortReply>(ServicePaths.Abort, (request, call) =>
        {
            JobOf(request.JobId, request.JobToken, call, ServicePaths.Abort).Fail(request.Rank, request.ErrorCode, request.Reason);
            return Task.FromResult(new AbortReply());
        }, RankRequests);
        endpoints.MapGrpcUnary<SpawnRequest, RankTable>(ServicePaths.Spawn, (request, call) =>
            JobOf(request.JobId, request.JobToken, call, ServicePaths.Spawn).SpawnAsync(request, call.CancellationToken), RankRequests);
        endpoints.MapGrpcUnary<LinkedRequest, LinkedReply>(ServicePaths.Linked, (request, call) =>
        {
            JobOf(request.JobId, request.JobToken, call, ServicePaths.Linked).Linked(request);
            return Task.FromResult(new LinkedReply());
        }, RankRequests);
    }

    private async Task SubmitAsync(SubmitRequest request, MessageWriter<JobEvent> responses, ServerCallContext call)
    {
        ComputationDefinition computation;
        try
        {
            computation = ComputationFile.Parse(request.ComputationXml, request.FileName);
        }
        catch (ComputationFileException e)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, e.Message, e));
        }
        // Request signing is this process's own secret: no other agent could check it.
        if (!computation.IsLocal && guard.Security.LoopbackOnly)
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"{request.FileName}: the computation names nodes, but this master has no cluster credential to reach their agents with: "
                + "give --credentials DIR (or PMPI_CREDENTIALS), or submit with --master to an agent of the cluster."));
        CheckLocalSlots(computation);
        JobRun job;
        try
        {
            job = new JobRun(computation, address(), options.Domain ?? "", localAgent(), guard.Security, options.HeartbeatTimeout, options.RegistrationTimeout, request.NetworkLinks, request.Unbound,
                request.ReportBindings);
        }
        catch (ArgumentException e)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"{request.FileName}: {e.Message}.", e));
        }
        _jobs[job.Id] = job;
        try
        {
            await job.RunAsync(responses, call.CancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _jobs.TryRemove(job.Id, out _);
        }
    }

    /// <summary>
    /// Refuses, before anything launches, a computation without nodes that the local agent would refuse: more ranks
    /// than its slots, or with oversubscription more than <see cref="AgentOptions.OversubscribedRanksPerSlot"/> per slot.
    /// </summary>
    private void CheckLocalSlots(ComputationDefinition computation)
    {
        if (!computation.IsLocal) return;
        long cap = computation.Oversubscribe ? (long)options.Slots * AgentOptions.OversubscribedRanksPerSlot : options.Slots;
        if (computation.WorldSize <= cap) return;
        var message = computation.Oversubscribe
            ? $"{computation.WorldSize} ranks exceed the {cap} the local agent runs even oversubscribed ({AgentOptions.OversubscribedRanksPerSlot} per slot, {options.Slots} slots)"
            : $"{computation.WorldSize} ranks exceed the {options.Slots} slots of the local agent (one per logical core unless `pmpi agent --slots` says otherwise); set oversubscribe=\"true\" on <computation> (`pmpi run --oversubscribe`) to run up to {(long)options.Slots * AgentOptions.OversubscribedRanksPerSlot}";
        var location = computation.Ranks.Length > 0 ? computation.Ranks[^1].Location : computation.Location;
        throw new RpcException(new Status(StatusCode.InvalidArgument, new ComputationFileException([new ComputationFileError(location, message)]).Message));
    }

    /// <summary>
    /// The job a rank's call names, once its key is proven. An unknown job and a wrong key get the same status and
    /// message (PERMISSION_DENIED, logged), so a caller cannot probe which jobs run here (docs/security.md).
    /// </summary>
    private JobRun JobOf(string jobId, string token, ServerCallContext call, string method)
    {
        if (!_jobs.TryGetValue(jobId, out var job) || !JobTickets.TokenMatches(job.Token, token))
            throw guard.Refuse(call, method, StatusCode.PermissionDenied, $"job {jobId} does not run on this master, or its key is not the one given");
        // Ranks hold no certificate: the key is their proof, and keeps their connection from being shed for others.
        AdmittedConnection.MarkAuthenticated(call.HttpContext);
        return job;
    }
}
