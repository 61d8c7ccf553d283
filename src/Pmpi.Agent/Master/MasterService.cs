using Grpc.Core;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Hosting;
using Pmpi.Agent.Internal;
using Pmpi.Agent.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Master;

/// <summary>
/// The Master service: validates a submitted computation, places its ranks and runs the job (<see cref="JobRun"/>):
/// launching them through the agents, and ending the job — aborting every rank when one fails. Its ranks reach it
/// through <see cref="JobControlService"/>.
/// </summary>
/// <param name="address">The master's own address, handed to ranks so they can register.</param>
/// <param name="localAgent">The agent that runs computations declaring no nodes (the embedded default).</param>
/// <param name="jobs">The jobs running here, which their ranks find by id.</param>
/// <param name="guard">Authenticates submitters (cluster members) and refuses, logging, whoever is not.</param>
/// <param name="store">This agent's staged programs, where a submitter uploads the programs its job stages.</param>
/// <param name="options">The heartbeat and registration timeouts of its jobs, and the local agent's slots.</param>
internal sealed class MasterService(Func<Uri> address, Func<Uri> localAgent, RunningJobs jobs, CallGuard guard, ProgramCache store, AgentOptions options)
    : Rpc.V1.Master.MasterBase
{
    /// <summary>
    /// What a caller can make the master buffer per call: a computation file (at most 4 Mi characters, 3 bytes each
    /// in UTF-8 at worst). Submitters are cluster members, checked before a request byte is read.
    /// </summary>
    public const int MaxRequestSize = 16 * 1024 * 1024;

    public override Task Submit(SubmitRequest request, IServerStreamWriter<JobEvent> responseStream, ServerCallContext context) =>
        SubmitAsync(request, responseStream, context);

    private async Task SubmitAsync(SubmitRequest request, IServerStreamWriter<JobEvent> responses, ServerCallContext call)
    {
        ComputationDefinition computation;
        try
        {
            // A staged program need not be on this node: its ranks run from the copy shipped here, and
            // StagedPrograms.Check below holds each staged group's program to its shipped files.
            computation = ComputationFile.Parse(request.ComputationXml, request.FileName, programExists: request.Staged.Count == 0 ? null
                : path => File.Exists(path) || request.Staged.Values.Any(program => program.Files.Any(file => file.Path == Path.GetFileName(path))));
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
        var staged = StagedPrograms.Check(computation, request.Staged, store);
        JobRun job;
        try
        {
            job = new JobRun(computation, address(), options.Domain ?? "", localAgent(), guard.Security, options.HeartbeatTimeout, options.RegistrationTimeout, staged,
                request.NetworkLinks, request.Unbound, request.ReportBindings);
        }
        catch (ArgumentException e)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"{request.FileName}: {e.Message}.", e));
        }
        using var running = jobs.Add(job);
        await job.RunAsync(responses, call.CancellationToken).ConfigureAwait(false);
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
}
