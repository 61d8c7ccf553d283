using System.Collections.Concurrent;
using System.Security.Cryptography;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// A job a master registered: its key (derived here from its ticket), the agents its ticket names, its rank table and
/// where its master is.
/// </summary>
internal sealed class RegisteredJob(string id, string token, ByteString ticket, JobTicket parsed, RegisterJobRequest registration)
{
    public string Id => id;

    /// <summary>The job key ranks prove their routes with.</summary>
    public string Token => token;

    public ByteString Ticket => ticket;

    /// <summary>The agents the ticket names, each with the ranks it launches.</summary>
    public IReadOnlyList<AgentRanks> Agents => parsed.Agents;

    /// <summary>The latest registration (endpoints arrive with the second): the rank table and the master's place.</summary>
    public RegisterJobRequest Registration { get; set; } = registration;

    public RankTable Table => Registration.Table;
}

/// <summary>The jobs registered with this gateway: the only ones it relays streams for.</summary>
internal sealed class JobDirectory(RpcSecurity security, string domain, int maxJobs)
{
    private readonly ConcurrentDictionary<string, RegisteredJob> _jobs = new(StringComparer.Ordinal);

    public int Count => _jobs.Count;

    public bool TryGet(string jobId, out RegisteredJob job) => _jobs.TryGetValue(jobId, out job!);

    /// <summary>
    /// Registers a job, or replaces the table of one registered with the same ticket. A new registration needs a ticket
    /// signed with the cluster key and unexpired; its table must have one entry per rank of the ticket and of the
    /// worlds its ranks spawned (<see cref="SpawnedRanks"/>), each at its index, and a rank or the master in this
    /// gateway's domain.
    /// </summary>
    /// <exception cref="RpcException">PERMISSION_DENIED for a bad ticket; INVALID_ARGUMENT or FAILED_PRECONDITION for a table that does not fit.</exception>
    public RegisteredJob Register(RegisterJobRequest request)
    {
        JobTicket? ticket = null;
        var table = request.Table ?? throw new RpcException(new Status(StatusCode.InvalidArgument, "The registration carries no rank table."));
        RegisteredJob? known = null;
        if (!JobTickets.TryVerify(security, request.Ticket, request.TicketSignature, out ticket, out var failure))
        {
            // The second registration (with the endpoints) may come after the ticket expired; it must repeat the ticket exactly.
            known = _jobs.Values.FirstOrDefault(job => CryptographicOperations.FixedTimeEquals(job.Ticket.Span, request.Ticket.Span));
            if (known is null) throw new RpcException(new Status(StatusCode.PermissionDenied, failure));
            ticket = JobTicket.Parser.ParseFrom(known.Ticket);
        }
        var previous = known ?? (_jobs.TryGetValue(ticket.JobId, out var registered) ? registered : null);
        long ranks = ticket.WorldSize + SpawnedRanks(request, ticket, previous?.Registration);
        if (table.Ranks.Count != ranks)
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"The rank table of job {ticket.JobId} has {table.Ranks.Count} entries for {ranks} ranks."));
        for (int rank = 0; rank < table.Ranks.Count; rank++)
        {
            if (table.Ranks[rank].Rank != rank)
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"Entry {rank} of the rank table of job {ticket.JobId} is for rank {table.Ranks[rank].Rank}."));
        }
        if (request.MasterDomain != domain && !table.Ranks.Any(entry => entry.Domain == domain))
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Job {ticket.JobId} has neither a rank nor its master in domain '{domain}', which this gateway serves."));
        if (known is not null)
        {
            known.Registration = request;
            return known;
        }
        if (_jobs.Count >= maxJobs && !_jobs.ContainsKey(ticket.JobId))
            throw new RpcException(new Status(StatusCode.ResourceExhausted, $"This gateway holds {maxJobs} jobs already (GatewayOptions.MaxJobs); job {ticket.JobId} is refused."));
        var job = _jobs.AddOrUpdate(ticket.JobId,
            id => new RegisteredJob(id, JobTickets.JobToken(security, ticket), request.Ticket, ticket, request),
            (id, existing) =>
            {
                if (!CryptographicOperations.FixedTimeEquals(existing.Ticket.Span, request.Ticket.Span))
                    throw new RpcException(new Status(StatusCode.AlreadyExists, $"Job {id} is registered with another ticket."));
                existing.Registration = request;
                return existing;
            });
        return job;
    }

    public bool Remove(string jobId) => _jobs.TryRemove(jobId, out _);

    /// <summary>
    /// How many ranks the worlds that the job's ranks spawned add, from their tickets: each signed with the cluster
    /// key, of the job (its id and nonce) and starting where the worlds before it end; unexpired unless
    /// <paramref name="previous"/> carried it already.
    /// </summary>
    private long SpawnedRanks(RegisterJobRequest request, JobTicket job, RegisterJobRequest? previous)
    {
        long spawned = 0;
        foreach (var signed in request.Spawned)
        {
            var repeated = previous?.Spawned.FirstOrDefault(known => CryptographicOperations.FixedTimeEquals(known.Ticket.Span, signed.Ticket.Span)
                && CryptographicOperations.FixedTimeEquals(known.Signature.Span, signed.Signature.Span));
            JobTicket? world;
            if (repeated is not null) world = JobTicket.Parser.ParseFrom(repeated.Ticket);
            else if (!JobTickets.TryVerify(security, signed.Ticket, signed.Signature, out world, out var failure))
                throw new RpcException(new Status(StatusCode.PermissionDenied, $"A spawned world's ticket of job {job.JobId}: {failure}"));
            if (world.JobId != job.JobId || !world.Nonce.Equals(job.Nonce))
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"A spawned world's ticket registered for job {job.JobId} is of another job (its id or nonce differs)."));
            long next = job.WorldSize + spawned;
            if (world.WorldFirst != next || world.WorldSize < 1)
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"The ticket of a world spawned in job {job.JobId} is for {world.WorldSize} ranks from rank {world.WorldFirst}; the job's next world starts at rank {next}."));
            spawned += world.WorldSize;
        }
        return spawned;
    }
}
