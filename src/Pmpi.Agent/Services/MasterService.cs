using System.Collections.Concurrent;
using System.Security.Cryptography;
using Pmpi.Agent.Computation;
using Pmpi.Rpc;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Services;

/// <summary>
/// The Master service: validates a submitted computation, places its ranks, launches them through the agents, is
/// where ranks register to learn each other's endpoints, and ends the job — aborting every rank when one fails.
/// </summary>
/// <param name="address">The master's own address, handed to ranks so they can register.</param>
/// <param name="localAgent">The agent that runs computations declaring no nodes (the embedded default).</param>
internal sealed class MasterService(Func<Uri> address, Func<Uri> localAgent)
{
    private readonly ConcurrentDictionary<string, JobRun> _jobs = new();

    public void Map(Microsoft.AspNetCore.Routing.IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGrpcServerStreaming<SubmitRequest, JobEvent>(ServicePaths.Submit, SubmitAsync);
        endpoints.MapGrpcUnary<RegisterRequest, RankTable>(ServicePaths.Register, (request, call) => JobOf(request.JobId, request.JobToken).RegisterAsync(request, call.CancellationToken));
        endpoints.MapGrpcUnary<AbortRequest, AbortReply>(ServicePaths.Abort, (request, _) =>
        {
            JobOf(request.JobId, request.JobToken).Fail(request.Rank, request.ErrorCode, request.Reason);
            return Task.FromResult(new AbortReply());
        });
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
            throw new RpcException(StatusCode.InvalidArgument, e.Message, e);
        }
        var job = new JobRun(computation, address(), localAgent());
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

    private JobRun JobOf(string jobId, string token)
    {
        if (!_jobs.TryGetValue(jobId, out var job)) throw new RpcException(StatusCode.NotFound, $"No job {jobId} runs on this master.");
        if (!CryptographicOperations.FixedTimeEquals(System.Text.Encoding.UTF8.GetBytes(token), System.Text.Encoding.UTF8.GetBytes(job.Token)))
            throw new RpcException(StatusCode.PermissionDenied, $"Wrong token for job {jobId}.");
        return job;
    }
}
