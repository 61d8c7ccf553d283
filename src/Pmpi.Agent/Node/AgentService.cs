using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using System.Threading.Channels;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Pmpi.Agent.Hosting;
using Pmpi.Agent.Internal;
using Pmpi.Agent.Launching;
using Pmpi.Agent.NodeInfo;
using Pmpi.Agent.Staging;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;
using Microsoft.AspNetCore.Http;

namespace Pmpi.Agent.Node;

/// <summary>
/// The Agent service: describes the node, launches ranks and streams their lives, kills jobs, and keeps the staged
/// programs shipped to it (<see cref="ProgramCache"/>). A Launch call owns its processes: when it ends for any reason
/// (all exited, Kill, the master gone) none is left running.
/// </summary>
internal sealed class AgentService(AgentOptions options, INodeInfoProvider nodeInfo, CallGuard guard, AgentMeters meters, ProgramCache staged,
    ILogger<AgentService> logger)
    : Rpc.V1.Agent.AgentBase
{
    /// <summary>How long killing waits for the processes to be gone; one stuck in the kernel must not hang the agent.</summary>
    private static readonly TimeSpan KillWait = TimeSpan.FromSeconds(5);

    /// <summary>How long a shutdown waits for its notice to reach the masters before it kills their ranks.</summary>
    private static readonly TimeSpan NotifyWait = TimeSpan.FromSeconds(1);

    /// <summary>Events a launch queues for its master before the ranks' pipes are no longer read: a bounded memory per launch.</summary>
    private const int EventQueueLength = 64;

    /// <summary>How often a launch tells its master the agent is alive.</summary>
    private static readonly TimeSpan HeartbeatInterval = TimeSpan.FromSeconds(1);

    /// <summary>How long a rank's exit waits for its heartbeat pipe to be read to the end (which says whether it joined).</summary>
    private static readonly TimeSpan JoinedGrace = TimeSpan.FromSeconds(2);

    private static readonly LaunchEvent Heartbeat = new() { Heartbeat = new AgentHeartbeat() };

    /// <summary>
    /// What a caller can make the agent buffer per call: a launch names programs, arguments and environments of its
    /// ranks. Every method is for cluster members only, checked before a request byte is read (<see cref="CallGuard"/>).
    /// </summary>
    public const int MaxRequestSize = 4 * 1024 * 1024;

    /// <summary>The launches running here, by <see cref="LaunchKey"/>: a job's first world, and each world its ranks spawned.</summary>
    private readonly ConcurrentDictionary<string, LaunchedJob> _jobs = new(StringComparer.Ordinal);
    /// <summary>The tickets this agent accepted (by <see cref="LaunchKey"/>), with their expiry: a ticket launches once.</summary>
    private readonly ConcurrentDictionary<string, long> _admitted = new(StringComparer.Ordinal);
    private readonly Lock _slotsLock = new();
    private int _running;
    private volatile bool _stopping;

    public override Task<Rpc.V1.NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context) => Task.FromResult(GetNodeInfo());

    public override async Task<KillReply> Kill(KillRequest request, ServerCallContext context) =>
        new() { Killed = await KillAsync(request.JobId, request.JobToken, context.GetHttpContext()).ConfigureAwait(false) };

    public override Task Launch(LaunchRequest request, IServerStreamWriter<LaunchEvent> responseStream, ServerCallContext context) =>
        LaunchAsync(request, responseStream, context);

    public override Task<MissingFilesReply> MissingFiles(StagedProgram request, ServerCallContext context)
    {
        if (ProgramManifest.Problem(request) is { } problem) throw new RpcException(new Status(StatusCode.InvalidArgument, $"The staged program is malformed: {problem}."));
        var reply = new MissingFilesReply();
        try
        {
            var missing = staged.Missing(request);
            staged.MakeRoomFor(request, missing, StagedInUse());
            reply.Sha256.AddRange(missing);
        }
        catch (StagingFullException e)
        {
            throw StagingFull(e);
        }
        return Task.FromResult(reply);
    }

    public override async Task<UploadReply> Upload(IAsyncStreamReader<FileChunk> requestStream, ServerCallContext context)
    {
        if (!await requestStream.MoveNext(context.CancellationToken).ConfigureAwait(false))
            throw new RpcException(new Status(StatusCode.InvalidArgument, "An upload sent no chunk; its first names the file."));
        var first = requestStream.Current;
        try
        {
            await staged.AddAsync(first.Sha256.Memory, first.Size, Pieces(first, requestStream, context.CancellationToken), StagedInUse(), context.CancellationToken).ConfigureAwait(false);
        }
        catch (StagingFullException e)
        {
            throw StagingFull(e);
        }
        catch (InvalidDataException e)
        {
            AgentLog.UploadRefused(logger, e.Message);
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"The upload was refused: {e.Message}."));
        }
        return new UploadReply();
    }

    /// <summary>An upload's bytes, as its chunks bring them.</summary>
    private static async IAsyncEnumerable<ReadOnlyMemory<byte>> Pieces(FileChunk first, IAsyncStreamReader<FileChunk> rest, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        yield return first.Data.Memory;
        while (await rest.MoveNext(cancellationToken).ConfigureAwait(false)) yield return rest.Current.Data.Memory;
    }

    /// <summary>Jobs with ranks on this node now.</summary>
    public int JobCount => _jobs.Values.Select(job => job.JobId).Distinct().Count();

    public Rpc.V1.NodeInfo GetNodeInfo()
    {
        var node = nodeInfo.GetMetadata();
        var info = new Rpc.V1.NodeInfo
        {
            NodeName = node.NodeName,
            LogicalCores = node.LogicalCores,
            CpuModel = node.CpuModel ?? "",
            LoadAverage1 = node.LoadAverage1 ?? double.NaN,
            LoadAverage5 = node.LoadAverage5 ?? double.NaN,
            LoadAverage15 = node.LoadAverage15 ?? double.NaN,
            MemoryTotalBytes = node.MemoryTotalBytes,
            MemoryAvailableBytes = node.MemoryAvailableBytes ?? -1,
            OsDescription = node.OsDescription,
            OsVersion = node.OsVersion,
            Architecture = node.Architecture.ToString(),
            RuntimeVersion = node.RuntimeDescription,
            Domain = options.Domain ?? "",
            Gateway = options.Gateway ?? "",
            RankAddress = options.RankBindAddress,
            Slots = options.Slots,
        };
        info.RunningJobs.AddRange(_jobs.Values.Select(job => job.JobId).Distinct().Order(StringComparer.Ordinal));
        return info;
    }

    /// <summary>Kills a job's ranks on this node; completes once they are gone (or after <see cref="KillWait"/>).</summary>
    /// <exception cref="RpcException">PERMISSION_DENIED: <paramref name="jobToken"/> is not the job's.</exception>
    private async Task<int> KillAsync(string jobId, string jobToken, HttpContext call)
    {
        var launches = _jobs.Values.Where(job => job.JobId == jobId).ToArray();
        if (launches.Length == 0) return 0;
        if (!JobTickets.TokenMatches(launches[0].Token, jobToken))
            throw guard.Refuse(call, ServicePaths.Kill, StatusCode.PermissionDenied, $"a wrong job key for job {jobId}: only its master may kill it");
        var killed = launches.SelectMany(job => job.Processes).ToArray();
        foreach (var process in killed) process.Kill();
        AgentLog.JobKilled(logger, jobId, killed.Length);
        try
        {
            await Task.WhenAll(killed.Select(p => p.Exited)).WaitAsync(KillWait).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // Signalled but not yet gone; the job's launch reports each exit when it comes.
        }
        return killed.Length;
    }

    /// <summary>
    /// Kills the ranks of every job (the agent is shutting down). Their launches end with UNAVAILABLE instead of
    /// reporting the killed ranks' exit codes, so a master blames the lost agent, not a rank.
    /// </summary>
    public void KillAll()
    {
        _stopping = true;
        // Tell each master first, while the ranks still run: a rank killed before the master heard would make its
        // peers report broken streams, and the master would blame a rank for the agent's shutdown.
        var stopping = new LaunchEvent { Stopping = new AgentStopping { Reason = "the agent is shutting down" } };
        var told = _jobs.Values.Select(job => job.Events.WriteAsync(stopping, CancellationToken.None)).ToArray();
        try
        {
            Task.WaitAll(told, NotifyWait);
        }
        catch (AggregateException)
        {
            // A master already gone needs no notice.
        }
        var killed = _jobs.Values.SelectMany(job => job.Processes).ToArray();
        foreach (var process in killed) process.Kill();
        // A signal is only a request: the agent must not exit (leaving a supervisor to think all is stopped) before
        // its ranks have.
        Task.WhenAll(killed.Select(p => p.Exited)).Wait(KillWait);
    }

    /// <summary>Stops every rank this agent runs where it is, until <see cref="ContinueAll"/>: `pmpi run`'s Ctrl-Z.</summary>
    public void SuspendAll()
    {
        foreach (var process in _jobs.Values.SelectMany(job => job.Processes)) process.Suspend();
    }

    /// <summary>Lets the ranks <see cref="SuspendAll"/> stopped go on.</summary>
    public void ContinueAll()
    {
        foreach (var process in _jobs.Values.SelectMany(job => job.Processes)) process.Continue();
    }

    private async Task LaunchAsync(LaunchRequest request, IServerStreamWriter<LaunchEvent> stream, ServerCallContext call)
    {
        var responses = new SharedStreamWriter<LaunchEvent>(stream);
        if (request.Ranks.Count == 0) throw new RpcException(new Status(StatusCode.InvalidArgument, "A launch needs at least one rank."));
        var token = Admit(request, call.GetHttpContext());
        if (_stopping)
        {
            meters.LaunchRefused();
            throw ShuttingDown(request);
        }
        var stagedDirectories = PlaceStaged(request);
        // Programs are checked where they run, all before any starts: the master's machine may not have them.
        var missing = request.Ranks.Select(rank => RankProcess.WhyNotStartable(rank.Rank, rank.Program, WorkingDirectoryOf(rank))).OfType<string>().ToArray();
        if (missing.Length > 0)
        {
            var reason = $"{string.Join("; ", missing)}; no rank of job {request.JobId} was started here";
            AgentLog.LaunchFailed(logger, request.JobId, reason);
            meters.LaunchRefused();
            throw new RpcException(new Status(StatusCode.FailedPrecondition, reason));
        }
        TakeSlots(request);
        var processes = new ConcurrentBag<RankProcess>();
        if (!_jobs.TryAdd(LaunchKey(request.JobId, request.WorldFirst), new LaunchedJob(request.JobId, token, processes, responses, stagedDirectories)))
        {
            ReleaseSlots(request.Ranks.Count);
            meters.LaunchRefused();
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Job {request.JobId} already runs on this node."));
        }
        if (stagedDirectories.Length > 0) CleanStaged();
        meters.LaunchStarted();
        // Output arrives from many processes; one writer keeps the response stream in order per rank. The queue is
        // bounded: while the master reads slowly, the ranks' pipes are not read and the ranks wait in their writes.
        var events = Channel.CreateBounded<LaunchEvent>(new BoundedChannelOptions(EventQueueLength) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
        var pump = PumpAsync(events.Reader, responses, call.CancellationToken);
        // A full queue means events are flowing or the master is not reading: either way a heartbeat can be skipped.
        using var heartbeat = new Timer(_ => events.Writer.TryWrite(Heartbeat), null, HeartbeatInterval, HeartbeatInterval);
        DirectoryInfo? keys = null;
        try
        {
            // Each rank's job key goes through an owner-only file the rank deletes, never argv or the environment.
            keys = Directory.CreateTempSubdirectory("pmpi-launch-");
            var exits = new List<Task>();
            foreach (var rank in request.Ranks)
            {
                var process = RankProcess.Start(StartOf(request, rank, WriteRankCredentials(keys, rank.Rank, token, request)), piece => Send(events.Writer,
                    new LaunchEvent { Output = new RankOutput { Rank = rank.Rank, IsError = piece.Stream == OutputStream.Stderr, Line = piece.Text, Continues = piece.Continues } },
                    call.CancellationToken));
                processes.Add(process);
                meters.RankStarted();
                await Send(events.Writer, new LaunchEvent { Started = new RankStarted { Rank = rank.Rank, ProcessId = process.ProcessId } }, call.CancellationToken).ConfigureAwait(false);
                var joined = request.Table is null ? Task.CompletedTask : ReportJoinedAsync(process, rank.Rank, events.Writer, call.CancellationToken);
                exits.Add(ReportExitAsync(process, request.JobId, rank.Rank, joined, events.Writer, call.CancellationToken));
            }
            AgentLog.JobLaunched(logger, request.JobId, request.Ranks.Count, request.MasterAddress);
            await Task.WhenAll(exits).WaitAsync(call.CancellationToken).ConfigureAwait(false);
            events.Writer.TryComplete();
            // The remaining output goes out before the call's status.
            await pump.ConfigureAwait(false);
            if (_stopping) throw ShuttingDown(request);
        }
        catch (OperationCanceledException) when (call.CancellationToken.IsCancellationRequested && !_stopping)
        {
            AgentLog.MasterGone(logger, request.JobId, request.MasterAddress, request.Ranks.Count);
            throw;
        }
        catch (Exception e) when (e is InvalidOperationException or IOException)
        {
            AgentLog.LaunchFailed(logger, request.JobId, e.Message);
            throw new RpcException(new Status(StatusCode.FailedPrecondition, e.Message, e));
        }
        finally
        {
            events.Writer.TryComplete();
            foreach (var process in processes) process.Dispose();
            // A rank killed before its same-node peer mapped their shared memory left the segment's name behind.
            SharedMemoryNames.RemoveLeftovers(token, request.Ranks.Select(rank => rank.Rank));
            _jobs.TryRemove(LaunchKey(request.JobId, request.WorldFirst), out _);
            keys?.Delete(recursive: true);
            ReleaseSlots(request.Ranks.Count);
            meters.LaunchEnded();
        }
    }

    /// <summary>Reserves a launch's slots, or refuses it: beyond the free slots only when oversubscription is asked, and never beyond the hard cap.</summary>
    private void TakeSlots(LaunchRequest request)
    {
        int asked = request.Ranks.Count;
        lock (_slotsLock)
        {
            int free = options.Slots - _running;
            int cap = options.Slots * AgentOptions.OversubscribedRanksPerSlot - _running;
            if (asked > (request.Oversubscribe ? cap : free))
            {
                var detail = request.Oversubscribe
                    ? $"Job {request.JobId} asks this agent for {asked} ranks; oversubscribed, it runs at most {AgentOptions.OversubscribedRanksPerSlot} per slot ({options.Slots} slots), and {_running} ranks run already."
                    : $"Job {request.JobId} asks this agent for {asked} ranks, but only {Math.Max(free, 0)} of its {options.Slots} slots are free; set oversubscribe=\"true\" on <computation> to allow more.";
                AgentLog.LaunchFailed(logger, request.JobId, detail);
                meters.LaunchRefused();
                throw new RpcException(new Status(StatusCode.ResourceExhausted, detail));
            }
            _running += asked;
            meters.SlotsTaken(asked);
        }
    }

    private void ReleaseSlots(int count)
    {
        lock (_slotsLock) _running -= count;
        meters.SlotsReleased(count);
    }

    /// <summary>Queues an event; once the launch's call is over there is nobody to tell, and the event is dropped.</summary>
    private static async ValueTask Send(ChannelWriter<LaunchEvent> events, LaunchEvent item, CancellationToken cancellationToken)
    {
        try
        {
            await events.WriteAsync(item, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or ChannelClosedException)
        {
            // The launch ended; a rank's output keeps draining so the rank never blocks on a full pipe meanwhile.
        }
    }

    /// <summary>
    /// Checks the launch's ticket (signature, expiry, job, world, this agent as the master dialled it, every
    /// rank, every staged program, not used before) and returns the job's token; refuses the call with
    /// PERMISSION_DENIED otherwise.
    /// </summary>
    private string Admit(LaunchRequest request, HttpContext call)
    {
        if (!JobTickets.TryVerify(guard.Security, request.Ticket, request.TicketSignature, out var ticket, out var failure))
            throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied, failure);
        if (ticket.JobId != request.JobId || ticket.WorldSize != request.WorldSize || ticket.WorldFirst != request.WorldFirst)
            throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied,
                $"the ticket is for job {ticket.JobId}'s world of {ticket.WorldSize} ranks from rank {ticket.WorldFirst}, not job {request.JobId}'s of {request.WorldSize} from {request.WorldFirst}");
        var dialled = call.Request.Host.Value ?? "";
        var mine = ticket.Agents.FirstOrDefault(agent => string.Equals(agent.Agent, dialled, StringComparison.OrdinalIgnoreCase))
            ?? throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied, $"job {ticket.JobId}'s ticket does not name this agent ({dialled})");
        foreach (var rank in request.Ranks)
            if (!mine.Ranks.Contains(rank.Rank) || rank.Rank < ticket.WorldFirst || rank.Rank >= ticket.WorldFirst + ticket.WorldSize)
                throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied, $"job {ticket.JobId}'s ticket does not give rank {rank.Rank} to this agent");
        foreach (var program in request.Staged)
            if (!ticket.Staged.Contains(ByteString.CopyFrom(ProgramManifest.Digest(program))))
                throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied, $"job {ticket.JobId}'s ticket does not allow the staged program {Convert.ToHexStringLower(ProgramManifest.Digest(program))} its launch carries");
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        foreach (var (launch, expires) in _admitted)
            if (expires < now) _admitted.TryRemove(launch, out _);
        if (!_admitted.TryAdd(LaunchKey(ticket.JobId, ticket.WorldFirst), ticket.ExpiresUnixMs))
            throw guard.Refuse(call, ServicePaths.Launch, StatusCode.PermissionDenied, $"job {ticket.JobId}'s ticket was already used on this agent (a replay)");
        return JobTickets.JobToken(guard.Security, ticket);
    }

    /// <summary>
    /// Points the ranks that run a staged program at this agent's copy of it, made from the store (whose files the
    /// master uploaded before the launch); returns those copies' directories. The ticket allowed each program (Admit).
    /// </summary>
    private string[] PlaceStaged(LaunchRequest request)
    {
        var programs = new Dictionary<ByteString, (StagedProgram Manifest, string Directory)>();
        try
        {
            foreach (var program in request.Staged) programs[ByteString.CopyFrom(ProgramManifest.Digest(program))] = (program, staged.Materialize(program));
        }
        catch (Exception e) when (e is InvalidDataException or IOException or UnauthorizedAccessException)
        {
            AgentLog.LaunchFailed(logger, request.JobId, e.Message);
            meters.LaunchRefused();
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Job {request.JobId}'s staged program cannot run here: {e.Message}; no rank of it was started here."));
        }
        foreach (var rank in request.Ranks.Where(rank => !rank.StagedProgram.IsEmpty))
        {
            if (!programs.TryGetValue(rank.StagedProgram, out var program) || !program.Manifest.Files.Any(file => file.Path == rank.Program))
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"Rank {rank.Rank} of job {request.JobId} names a staged program or file '{LogText.Printable(rank.Program)}' its launch does not carry."));
            rank.Program = Path.Combine(program.Directory, rank.Program.Replace('/', Path.DirectorySeparatorChar));
            if (rank.WorkingDirectory.Length == 0) rank.WorkingDirectory = program.Directory;
        }
        return [.. programs.Values.Select(program => program.Directory)];
    }

    /// <summary>Removes the staged files and programs no launch used for a while, except those of the launches running now.</summary>
    private void CleanStaged()
    {
        try
        {
            staged.Clean(DateTime.UtcNow, StagedInUse());
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // A store that cannot be cleaned now is cleaned at the next staged launch; this one runs.
            AgentLog.StagedCleaningFailed(logger, staged.Root, e.Message);
        }
    }

    /// <summary>The staged program directories of the launches running here.</summary>
    private HashSet<string> StagedInUse() => _jobs.Values.SelectMany(job => job.StagedDirectories).ToHashSet(StringComparer.Ordinal);

    private RpcException StagingFull(StagingFullException e)
    {
        AgentLog.UploadRefused(logger, e.Message);
        return new RpcException(new Status(StatusCode.ResourceExhausted, $"The staged program does not fit on this node: {e.Message}."));
    }

    /// <summary>A launch's key: its job and the first rank of its world, which a job's tickets never share.</summary>
    private static string LaunchKey(string jobId, int worldFirst) => $"{jobId}/{worldFirst}";

    /// <summary>
    /// Writes a rank's job token (and the CA its master's certificate chains to, and a node-local job's table) to an
    /// owner-only file; returns its path.
    /// </summary>
    private string WriteRankCredentials(DirectoryInfo directory, int rank, string token, LaunchRequest request)
    {
        var credentials = new RankCredentials { JobToken = token, Table = request.Table };
        if (request.MasterAddress.StartsWith("https:", StringComparison.OrdinalIgnoreCase) && guard.Security.Authority is { } authority)
            credentials.Authority = ByteString.CopyFrom(authority.RawData);
        var path = Path.Combine(directory.FullName, $"rank-{rank}");
        var file = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows()) file.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        using (var stream = new FileStream(path, file)) credentials.WriteTo(stream);
        return path;
    }

    /// <summary>
    /// How long .NET waits for its start's compiling to quiet down before it compiles hot methods again, optimised
    /// (100 ms unless set). A rank's message path is hot from its first messages, and until that wait ends and its
    /// methods are compiled it runs unoptimised code: a user's ping-pong without a warm-up took 1.2 µs at 1 B by the
    /// median of its first 20,000 round trips, and 0.6 µs with no wait, the steady figure
    /// (docs/bench-log/2026-12-01-tiering-delay.md). Ranks that have a processor each get no wait, unless their
    /// environment sets one; where ranks outnumber processors their extra compiling would share the cores and slow every
    /// rank's start (16 ranks on 2 cores launched in 2.5–2.9 s instead of 1.9–2.3).
    /// </summary>
    private const string TieringDelay = "DOTNET_TC_CallCountingDelayMs";

    private RankStart StartOf(LaunchRequest request, RankLaunch rank, string credentialsFile)
    {
        var environment = new Dictionary<string, string>(rank.Environment)
        {
            [RankEnvironment.JobId] = request.JobId,
            [RankEnvironment.CredentialsFile] = credentialsFile,
            [RankEnvironment.Rank] = rank.Rank.ToString(System.Globalization.CultureInfo.InvariantCulture),
            [RankEnvironment.Size] = request.WorldSize.ToString(System.Globalization.CultureInfo.InvariantCulture),
            [RankEnvironment.Master] = request.MasterAddress,
            [RankEnvironment.BindAddress] = options.RankBindAddress,
            [RankEnvironment.AgentProcessId] = System.Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture),
        };
        if (options.Domain is { } domain) environment[RankEnvironment.Domain] = domain;
        if (request.MasterGateway.Length > 0) environment[RankEnvironment.MasterGateway] = request.MasterGateway;
        if (request.NodeLocal) environment[RankEnvironment.NodeLocal] = "1";
        if (request.WorldFirst > 0) environment[RankEnvironment.WorldFirst] = request.WorldFirst.ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (request.Ranks.Count <= System.Environment.ProcessorCount && System.Environment.GetEnvironmentVariable(TieringDelay) is null)
            environment.TryAdd(TieringDelay, "0");
        return new RankStart(rank.Rank, rank.Program, [.. rank.Arguments], WorkingDirectoryOf(rank), environment)
        {
            HeartbeatTimeout = options.HeartbeatTimeout,
            Input = rank.Rank == 0 && request.WorldFirst == 0 ? options.RankZeroInput : null,
        };
    }

    /// <summary>The rank's working directory; when none is given (a program named for this node's system by a submitter on another), the program's own.</summary>
    private static string WorkingDirectoryOf(RankLaunch rank) => rank.WorkingDirectory.Length > 0 ? rank.WorkingDirectory
        : Path.IsPathFullyQualified(rank.Program) ? Path.GetDirectoryName(rank.Program)! : System.Environment.CurrentDirectory;

    /// <summary>Reports that a rank given its table at launch joined its job: its registration, made through this agent.</summary>
    private static async Task ReportJoinedAsync(RankProcess process, int rank, ChannelWriter<LaunchEvent> events, CancellationToken cancellationToken)
    {
        if (await process.Joined.ConfigureAwait(false)) await Send(events, new LaunchEvent { Joined = new RankJoined { Rank = rank } }, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Reports a rank frozen, if it falls silent, and its exit, after the report that it joined (<paramref name="joined"/>, <see cref="ReportJoinedAsync"/>).</summary>
    private async Task ReportExitAsync(RankProcess process, string jobId, int rank, Task joined, ChannelWriter<LaunchEvent> events, CancellationToken cancellationToken)
    {
        int processId = process.ProcessId; // read now: the process may be disposed by the time it exits
        if (await Task.WhenAny(process.Exited, process.Unresponsive).ConfigureAwait(false) == process.Unresponsive)
        {
            var silence = await process.Unresponsive.ConfigureAwait(false);
            AgentLog.RankUnresponsive(logger, jobId, rank, processId, silence.TotalSeconds);
            await Send(events, new LaunchEvent { Unresponsive = new RankUnresponsive { Rank = rank, ProcessId = processId, SilentMilliseconds = (long)silence.TotalMilliseconds } }, cancellationToken).ConfigureAwait(false);
        }
        int code = await process.Exited.ConfigureAwait(false);
        try
        {
            await joined.WaitAsync(JoinedGrace, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // The heartbeat pipe is read to its end after the exit: a descendant holding it open delays the exit's report this long at most.
        }
        AgentLog.RankExited(logger, jobId, rank, processId, code);
        meters.RankExited(code, process.WasKilled);
        // A rank killed by the shutdown did not fail: the launch's UNAVAILABLE status says what happened.
        var exited = new RankExited { Rank = rank, ExitCode = code, Killed = process.WasKilled };
        if (process.ReportsFinalize) exited.Finalized = process.Finalized;
        if (!_stopping) await Send(events, new LaunchEvent { Exited = exited }, cancellationToken).ConfigureAwait(false);
    }

    private static RpcException ShuttingDown(LaunchRequest request) =>
        new(new Status(StatusCode.Unavailable, $"the agent is shutting down; it killed the ranks of job {request.JobId} on its node"));

    private static async Task PumpAsync(ChannelReader<LaunchEvent> events, SharedStreamWriter<LaunchEvent> responses, CancellationToken cancellationToken)
    {
        await foreach (var item in events.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            await responses.WriteAsync(item, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A launch's ranks on this node, the job token that proves a caller may kill them, its launch's response stream,
    /// and the directories of the staged programs its ranks run (which cleaning leaves alone).
    /// </summary>
    private sealed record LaunchedJob(string JobId, string Token, ConcurrentBag<RankProcess> Processes, SharedStreamWriter<LaunchEvent> Events, string[] StagedDirectories);
}
