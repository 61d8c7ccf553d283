using System.Collections.Immutable;
using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Agent.Computation;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Agent.Master;

/// <summary>
/// One computation from submission to end. Exit code rule (what `pmpi run` returns): 0 when every rank exits 0;
/// otherwise the code of the first rank that failed (its exit code, or its Abort code); 124 when the computation's
/// timeout passes; 1 when an agent is lost or silent, a rank cannot be launched, a rank is frozen, or ranks do not
/// register in time. The abort that follows the first failure kills every other rank through its agent; those exits
/// are reported but change nothing. A job has the world its computation places and any worlds its ranks spawn
/// (MPI_Comm_spawn), each launched with a ticket of its own on the spawning root's node; a spawned rank's failure
/// fails the job as any rank's does. As with mpirun, the first world's programs need not use PMPI at all (`pmpi run
/// -n 2 hostname`): until one of its ranks registers, a rank may exit with code 0 unregistered and no registration is
/// awaited; once one has, every other must register within the registration timeout, as its peers wait for it.
/// </summary>
internal sealed class JobRun
{
    public const int TimeoutExitCode = 124;

    /// <summary>How long an abort waits for an agent to confirm its ranks are gone before abandoning its launch.</summary>
    private static readonly TimeSpan KillGrace = TimeSpan.FromSeconds(3);

    private readonly ComputationDefinition _computation;
    private readonly Uri _master;
    private readonly Uri _localAgent;
    private readonly RpcSecurity _security;
    private readonly List<IGrouping<Uri, RankAssignment>> _launches;
    private readonly JobTicket _jobTicket; // the first world's: each spawned world's ticket repeats its job id and nonce
    private readonly (ByteString Ticket, ByteString Signature) _ticket;
    private readonly SubmitterFeed _feed = new();
    private readonly TimeSpan _heartbeatTimeout;
    private readonly TimeSpan _registrationTimeout;
    private readonly RankTable _layout; // every rank's place, by job rank; registration adds the endpoints
    private readonly bool _nodeLocal;   // every rank on one node, linked by shared memory: no rank opens an endpoint
    private readonly bool _reportBindings;
    private readonly JobGateways _gateways;
    private readonly StagedPrograms _staged;
    // Under _lock, by job rank: what runs each rank, and its entry once registered. Spawns append to both.
    private readonly List<RankAssignment> _assignments;
    private readonly List<RankEntry?> _table;
    private readonly List<JobWorld> _worlds = [];
    private readonly List<SignedTicket> _spawnedTickets = []; // under _lock: each spawned world's, in its order
    private readonly SemaphoreSlim _registering = new(1, 1); // one registration with the gateways at a time: a later table never gives way to an earlier
    private readonly List<Task> _launchesRunning = [];
    private readonly CancellationTokenSource _end = new();
    private readonly Lock _lock = new();
    private (int Rank, int Code, string Reason)? _failure;
    private Timer? _registrationDeadline; // under _lock: the first world's, armed at its first registration, null once the job is over
    private int _launched, _registered, _exited;

    /// <exception cref="ArgumentException">The master cannot reach a domain of the computation: its own has no gateway.</exception>
    public JobRun(ComputationDefinition computation, Uri master, string masterDomain, Uri localAgent, RpcSecurity security, TimeSpan heartbeatTimeout,
        TimeSpan registrationTimeout, StagedPrograms staged, bool networkLinks = false, bool unbound = false, bool reportBindings = false)
    {
        _staged = staged;
        _reportBindings = reportBindings;
        _heartbeatTimeout = heartbeatTimeout;
        _registrationTimeout = registrationTimeout;
        _computation = computation;
        _master = master;
        _localAgent = localAgent;
        _security = security;
        var placement = Placement.Assign(computation);
        _assignments = [.. placement];
        _layout = RankTableLayout.Build(computation, placement, security.Scheme);
        _layout.NetworkLinks = networkLinks;
        _layout.Unbound = unbound;
        // One node and shared memory between its ranks: no rank needs an endpoint, so none starts a server.
        _nodeLocal = !networkLinks && _layout.Ranks.Select(entry => (entry.Domain, entry.Node)).Distinct().Count() == 1;
        _table = [.. new RankEntry?[computation.WorldSize]];
        _worlds.Add(new JobWorld(0, computation.WorldSize, spawned: null));
        Id = $"{computation.Name}-{Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(4))}";
        var masterGateway = computation.Domains.FirstOrDefault(domain => domain.Name == masterDomain)?.Gateway is { } gateway ? $"{security.Scheme}://{gateway}" : "";
        _gateways = JobGateways.For(Id, _layout, master, masterDomain, masterGateway, security);
        _launches = [.. placement.GroupBy(AgentOf)];
        // The ticket names each agent as the master dials it, which is the :authority each launch arrives with.
        var ticket = JobTickets.Create(Id, computation.WorldSize);
        foreach (var launch in _launches)
        {
            var agent = new AgentRanks { Agent = launch.Key.Authority };
            agent.Ranks.AddRange(launch.Select(assignment => assignment.WorldRank));
            ticket.Agents.Add(agent);
        }
        ticket.Staged.AddRange(staged.Digests);
        _jobTicket = ticket;
        _ticket = JobTickets.Sign(security, ticket);
        Token = JobTickets.JobToken(security, ticket);
    }

    public string Id { get; }

    /// <summary>The job's key (base64), derived from its ticket: ranks present it to register and to open streams to each other.</summary>
    public string Token { get; }

    /// <summary>Ranks in the job so far, over all its worlds.</summary>
    private int Size
    {
        get
        {
            lock (_lock) return _table.Count;
        }
    }

    private JobWorld FirstWorld => _worlds[0];

    public async Task RunAsync(IServerStreamWriter<JobEvent> responses, CancellationToken submitterGone)
    {
        var clock = Stopwatch.StartNew();
        using var registration = submitterGone.Register(() => Fail(-1, 1, "the submitter went away"));
        using var timeout = _computation.Timeout is { } limit
            ? new Timer(_ => Fail(-1, TimeoutExitCode, $"the computation's timeout of {limit} passed"), null, limit, Timeout.InfiniteTimeSpan)
            : null;
        using var registrationDeadline = new Timer(_ => FailUnregistered(), null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        lock (_lock) _registrationDeadline = registrationDeadline;
        var pump = _feed.PumpAsync(responses, submitterGone);
        await ProgressAsync().ConfigureAwait(false);

        // The gateways relay only for jobs registered with them: before any rank can dial one.
        if (await RegisterWithGatewaysAsync(FirstWorld).ConfigureAwait(false) is { } refused) Fail(-1, 1, refused);
        foreach (var group in _launches) Track(LaunchAsync(group.Key, [.. group], FirstWorld, _ticket));
        await LaunchesEndedAsync().ConfigureAwait(false);
        lock (_lock) _registrationDeadline = null;
        await _gateways.RemoveAsync().ConfigureAwait(false);

        var failure = _failure;
        var finished = new JobFinished
        {
            ExitCode = failure?.Code ?? 0,
            FailedRank = failure?.Rank ?? -1,
            Summary = failure switch
            {
                null => $"Job {Id}: {Size} ranks finished in {clock.Elapsed.TotalSeconds:F2} s.",
                { Rank: >= 0 } f => $"Job {Id} aborted after {clock.Elapsed.TotalSeconds:F2} s: rank {f.Rank} failed (exit code {f.Code}): {Sentence(f.Reason)}",
                { } f => $"Job {Id} aborted after {clock.Elapsed.TotalSeconds:F2} s (exit code {f.Code}): {Sentence(f.Reason)}",
            },
        };
        await _feed.PublishAsync(new JobEvent { Finished = finished }).ConfigureAwait(false);
        _feed.Complete();
        await pump.ConfigureAwait(false);
    }

    /// <summary>
    /// Records a rank's endpoint beside its place from the computation; answers once every rank of its world has
    /// registered (and, for a spawned world, the spawning ranks have linked to it). A rank whose agent serves another
    /// domain than the computation places its node in is refused and fails the job: its routes would be wrong.
    /// </summary>
    public async Task<RankTable> RegisterAsync(RegisterRequest request, CancellationToken cancellationToken)
    {
        RankEntry entry;
        lock (_lock)
        {
            if ((uint)request.Rank >= (uint)_table.Count) throw new RpcException(new Status(StatusCode.InvalidArgument, $"Rank {request.Rank} is not in job {Id} of {_table.Count} ranks."));
            entry = _layout.Ranks[request.Rank].Clone();
        }
        entry.Endpoint = request.Endpoint;
        entry.CertificateSha256 = request.CertificateSha256;
        if (request.Domain.Length > 0 && entry.Domain.Length > 0 && request.Domain != entry.Domain)
        {
            var reason = $"rank {request.Rank} runs on node '{entry.Node}', whose agent serves domain '{request.Domain}', but the computation places that node in domain '{entry.Domain}'";
            Fail(request.Rank, 1, reason);
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Job {Id}: {reason}."));
        }
        var world = Record(entry) ?? throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Rank {request.Rank} of job {Id} registered twice."));
        await ProgressAsync().ConfigureAwait(false);
        return await world.Released.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A rank of a node-local job joined it, as its agent reports (LaunchEvent.joined): it was given its table at
    /// launch, so this is its registration, without an endpoint or a reply.
    /// </summary>
    private async ValueTask JoinedAsync(int rank, string agent)
    {
        RankEntry? entry;
        lock (_lock) entry = (uint)rank < (uint)_table.Count ? _layout.Ranks[rank].Clone() : null;
        if (entry is null || Record(entry) is null) Fail(-1, 1, $"{agent} reported rank {rank} joining job {Id} of {Size} ranks twice or out of range");
        else await ProgressAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// Records a rank's registration; returns its world, or null when it had registered already. The first world's
    /// first registration arms its deadline; a rank of the world that exited unregistered then fails the job.
    /// </summary>
    private JobWorld? Record(RankEntry entry)
    {
        bool complete;
        JobWorld world;
        KeyValuePair<int, string>? left;
        lock (_lock)
        {
            if (_table[entry.Rank] is not null) return null;
            _table[entry.Rank] = entry;
            _registered++;
            world = WorldOf(entry.Rank);
            complete = ++world.Registered == world.Size;
            if (world == FirstWorld && world.Registered == 1) _registrationDeadline?.Change(_registrationTimeout, Timeout.InfiniteTimeSpan);
            left = world.LeftUnregistered.Count > 0 ? world.LeftUnregistered.MinBy(pair => pair.Key) : null;
        }
        if (left is { } early)
            Fail(early.Key, 1, $"its process exited with code 0 on {early.Value} before registering with the master, and rank {entry.Rank}, which registered, would wait for it (a rank program must call Pmpi.Environment.Run)");
        // Outside the lock: the gateways are called before the table is handed out. A spawned world's table goes to
        // its root first, and to its own ranks once the spawning ranks have linked to them (Linked).
        if (complete) _ = PublishTableAsync(world);
        return world;
    }

    /// <summary>
    /// Starts a world of new ranks on the node of the spawn's root (MPI_Comm_spawn), with a ticket of its own that
    /// gives them the job's key; answers with the job's table once they have all registered. Their program, which
    /// must sit in the directory of one of the computation's programs (or, for a staged root, be a file of its staged
    /// program, which the spawned ranks run from the same copy), runs with the root's group's environment, in the
    /// root's directory.
    /// </summary>
    public async Task<RankTable> SpawnAsync(SpawnRequest request, CancellationToken cancellationToken)
    {
        if (request.Count < 1) throw new RpcException(new Status(StatusCode.InvalidArgument, $"Rank {request.Rank} asked to spawn {request.Count} ranks; a spawn starts at least one."));
        if (request.Program.Length == 0) throw new RpcException(new Status(StatusCode.InvalidArgument, $"Rank {request.Rank} asked to spawn ranks without naming their program."));
        var program = SpawnedProgram(request);
        // A node-local job's ranks join through their agents, so a root may ask before its siblings' joins arrive: the
        // first world is complete first (or the job fails, at the latest at its registration deadline).
        await FirstWorld.Released.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        JobWorld world;
        RankAssignment root;
        (ByteString Ticket, ByteString Signature) signed;
        var spawned = new List<RankAssignment>();
        lock (_lock)
        {
            if (_failure is not null || _end.IsCancellationRequested) throw new RpcException(new Status(StatusCode.Aborted, $"Job {Id} is ending: it spawns nothing more."));
            if (!IsRegisteredLocked(request.Rank) || !request.Parents.Contains(request.Rank) || request.Parents.Any(parent => !IsRegisteredLocked(parent)))
                throw new RpcException(new Status(StatusCode.FailedPrecondition, $"Rank {request.Rank} of job {Id} asked to spawn for ranks [{string.Join(", ", request.Parents)}], which must include it and all be running."));
            if (_table.Count + (long)request.Count > ComputationFile.MaxWorldSize)
                throw new RpcException(new Status(StatusCode.ResourceExhausted, $"Rank {request.Rank} asked to spawn {request.Count} ranks; job {Id} has {_table.Count}, and a job may have at most {ComputationFile.MaxWorldSize}."));
            int first = _table.Count;
            root = _assignments[request.Rank];
            var group = root.Group with
            {
                Program = request.Program, ProgramPath = program, Count = request.Count,
                Arguments = [.. request.Arguments], WorkingDirectory = request.WorkingDirectory,
            };
            for (int rank = first; rank < first + request.Count; rank++)
            {
                spawned.Add(new RankAssignment(rank, group, root.Node));
                _assignments.Add(spawned[^1]);
                _table.Add(null);
                var place = _layout.Ranks[request.Rank].Clone();
                place.Rank = rank;
                _layout.Ranks.Add(place);
            }
            world = new JobWorld(first, request.Count, new SpawnedWorld { First = first, Size = request.Count, Parents = { request.Parents }, Context = request.Context });
            _worlds.Add(world);
            var ticket = JobTickets.CreateSpawned(_jobTicket, world.First, world.Size);
            ticket.Agents.Add(new AgentRanks { Agent = AgentOf(root).Authority, Ranks = { spawned.Select(assignment => assignment.WorldRank) } });
            signed = JobTickets.Sign(_security, ticket);
            _spawnedTickets.Add(new SignedTicket { Ticket = signed.Ticket, Signature = signed.Signature });
        }
        // The gateways learn the new ranks before they register through them, as they learned the first world's.
        if (await RegisterWithGatewaysAsync(world).ConfigureAwait(false) is { } refused)
        {
            Fail(-1, 1, refused);
            throw new RpcException(new Status(StatusCode.Unavailable, $"Rank {request.Rank} asked to spawn {request.Count} ranks, but {refused}."));
        }
        Track(LaunchAsync(AgentOf(root), spawned, world, signed));
        await ProgressAsync().ConfigureAwait(false);
        using var deadline = new Timer(_ => FailUnregistered(world), null, _registrationTimeout, Timeout.InfiniteTimeSpan);
        return await world.Complete.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The path (as the computation names its programs) of the program a spawn asks for. The job key alone must not
    /// run any program on a node: a spawn runs only programs beside the computation's own, and a staged root (which
    /// runs from its agent's copy) only files of its staged program.
    /// </summary>
    private string SpawnedProgram(SpawnRequest request)
    {
        RanksDefinition? rootGroup;
        lock (_lock) rootGroup = (uint)request.Rank < (uint)_assignments.Count ? _assignments[request.Rank].Group : null;
        if (rootGroup is not null && _staged.Of(rootGroup) is { } staged)
        {
            return (Path.IsPathFullyQualified(request.Program) ? staged.SubmittedPathOf(request.Program) : null)
                ?? throw new RpcException(new Status(StatusCode.PermissionDenied, $"Rank {request.Rank} asked to spawn {request.Program}, which is not a file of the staged program it runs (shipped from {staged.Directory}): a staged job spawns only programs it shipped."));
        }
        var directories = _computation.Ranks.Select(group => Path.GetDirectoryName(group.ProgramPath)).Distinct().ToList();
        var comparison = OperatingSystem.IsWindows() ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal;
        if (!Path.IsPathFullyQualified(request.Program) || !directories.Any(directory => string.Equals(directory, Path.GetDirectoryName(Path.GetFullPath(request.Program)), comparison)))
            throw new RpcException(new Status(StatusCode.PermissionDenied, $"Rank {request.Rank} asked to spawn {request.Program}, which is not in the directory of a program job {Id} runs ({string.Join(", ", directories)}): a job spawns only programs beside its own."));
        return request.Program;
    }

    /// <summary>The spawning ranks have linked to a spawned world: its ranks get their table.</summary>
    public void Linked(LinkedRequest request)
    {
        JobWorld? world;
        lock (_lock) world = _worlds.Find(candidate => candidate.First == request.WorldFirst && candidate.Spawned is { } spawned && spawned.Parents.Contains(request.Rank));
        if (world is null) throw new RpcException(new Status(StatusCode.NotFound, $"Job {Id} has no world from rank {request.WorldFirst} that rank {request.Rank} spawned."));
        if (!world.Complete.Task.IsCompletedSuccessfully)
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"The ranks of job {Id} from rank {request.WorldFirst} have not all registered."));
        world.Released.TrySetResult(world.Complete.Task.Result);
    }

    /// <summary><see cref="TableFor"/>, taking the lock.</summary>
    private RankTable TableOf(JobWorld world)
    {
        lock (_lock) return TableFor(world);
    }

    /// <summary>Every rank's entry (a rank still starting has its place and no endpoint), and the spawned world the table is for (under <see cref="_lock"/>).</summary>
    private RankTable TableFor(JobWorld world)
    {
        var table = new RankTable { Reach = { _layout.Reach }, NetworkLinks = _layout.NetworkLinks, Unbound = _layout.Unbound, Spawned = world.Spawned };
        table.Ranks.AddRange(_table.Select((entry, rank) => entry ?? _layout.Ranks[rank]));
        return table;
    }

    /// <summary>
    /// Hands a world's complete table out, once the gateways (if any) know every endpoint in their domains: to the
    /// first world's ranks, or to a spawned world's root.
    /// </summary>
    private async Task PublishTableAsync(JobWorld world)
    {
        if (await RegisterWithGatewaysAsync(world).ConfigureAwait(false) is { } refused) Fail(-1, 1, refused);
        else (world.Spawned is null ? world.Released : world.Complete).TrySetResult(TableOf(world));
    }

    /// <summary>
    /// Registers the job's table as it stands, with every spawned world's ticket, with its gateways (none: nothing to
    /// do); why one refused, or null.
    /// </summary>
    private async Task<string?> RegisterWithGatewaysAsync(JobWorld world)
    {
        if (_gateways.IsEmpty) return null;
        try
        {
            await _registering.WaitAsync(_end.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return null; // the job ended meanwhile, for a reason already reported
        }
        try
        {
            RankTable table;
            SignedTicket[] spawned;
            lock (_lock) (table, spawned) = (TableFor(world), [.. _spawnedTickets]);
            return await _gateways.RegisterAsync(_ticket, spawned, table, _end.Token).ConfigureAwait(false);
        }
        finally
        {
            _registering.Release();
        }
    }

    /// <summary>Ends the job when ranks of the first world are still missing at the registration deadline, naming them.</summary>
    private void FailUnregistered() => FailUnregistered(FirstWorld);

    /// <summary>Ends the job when ranks of <paramref name="world"/> are still missing at its registration deadline, naming them.</summary>
    private void FailUnregistered(JobWorld world)
    {
        int[] missing;
        lock (_lock) missing = [.. Enumerable.Range(world.First, world.Size).Where(rank => _table[rank] is null)];
        if (missing.Length == 0) return;
        var names = missing.Length <= 10 ? string.Join(", ", missing) : $"{string.Join(", ", missing[..10])} and {missing.Length - 10} more";
        Fail(missing.Length == 1 ? missing[0] : -1, 1, $"rank{(missing.Length == 1 ? "" : "s")} {names} did not register with the master within {_registrationTimeout.TotalSeconds:F0} s (see --register-timeout)");
    }

    /// <summary>
    /// Notes a rank that exited with code 0 unregistered; whether that fails the job now: a rank of its world has
    /// registered, or PMPI ranks spawned it. Otherwise its world may not use PMPI, and only a later registration fails.
    /// </summary>
    private bool LeftUnregistered(int rank, string agent)
    {
        lock (_lock)
        {
            var world = WorldOf(rank);
            if (world.Spawned is not null || world.Registered > 0) return true;
            world.LeftUnregistered[rank] = agent;
            return false;
        }
    }

    /// <summary>The world a job rank belongs to (under <see cref="_lock"/>).</summary>
    private JobWorld WorldOf(int rank) => _worlds.Last(candidate => candidate.First <= rank);

    private bool IsRegistered(int rank)
    {
        lock (_lock) return IsRegisteredLocked(rank);
    }

    private bool IsRegisteredLocked(int rank) => (uint)rank < (uint)_table.Count && _table[rank] is not null;

    /// <summary>Ends the job because of <paramref name="rank"/> (-1: not a rank); the first failure is the one reported.</summary>
    public void Fail(int rank, int code, string reason)
    {
        JobWorld[] worlds;
        lock (_lock)
        {
            if (_failure is not null || _end.IsCancellationRequested) return;
            _failure = (rank, code == 0 ? 1 : code, reason);
            worlds = [.. _worlds];
        }
        var aborted = new RpcException(new Status(StatusCode.Aborted, $"Job {Id} was aborted: {reason}."));
        foreach (var world in worlds)
        {
            world.Complete.TrySetException(aborted);
            world.Released.TrySetException(aborted);
        }
        _end.Cancel();
    }

    private Uri AgentOf(RankAssignment assignment) => assignment.Node is { } node ? _security.AddressOf(node.Agent) : _localAgent;

    private void Track(Task launch)
    {
        lock (_lock) _launchesRunning.Add(launch);
    }

    /// <summary>Waits for every launch, the spawned worlds' included (a spawn comes from a running rank, so before its own launch ends).</summary>
    private async Task LaunchesEndedAsync()
    {
        for (int waited = 0; ;)
        {
            Task[] running;
            lock (_lock)
            {
                if (waited == _launchesRunning.Count) return;
                running = [.. _launchesRunning];
            }
            await Task.WhenAll(running).ConfigureAwait(false);
            waited = running.Length;
        }
    }

    private async Task LaunchAsync(Uri agent, IReadOnlyList<RankAssignment> ranks, JobWorld world, (ByteString Ticket, ByteString Signature) ticket)
    {
        RankEntry place;
        lock (_lock) place = _layout.Ranks[ranks[0].WorldRank];
        // How errors name the agent: by the node the computation file declares, where it was dialled, and through
        // which gateways when its domain is not reached directly.
        string name = ranks[0].Node is not { } node ? $"the local agent at {agent.Authority}"
            : place.Domain.Length == 0 ? $"the agent of node '{node.Name}' at {agent.Authority}"
            : $"the agent of node '{node.Name}' at {agent.Authority} (domain '{place.Domain}'{_gateways.WayToAgent(place.Domain)})";
        var request = new LaunchRequest
        {
            JobId = Id, WorldFirst = world.First, WorldSize = world.Size, MasterAddress = _master.ToString(), Ticket = ticket.Ticket, TicketSignature = ticket.Signature,
            Oversubscribe = _computation.Oversubscribe, NodeLocal = _nodeLocal, MasterGateway = _gateways.MasterGatewayFor(place.Domain, place.Gateway),
        };
        // A node-local first world needs no endpoints: its ranks get their table now and join through their agent,
        // so none of them opens an HTTP/2 connection to register.
        if (_nodeLocal && world.Spawned is null)
        {
            lock (_lock) request.Table = TableFor(world);
        }
        // A launch holds its world's ranks on one node, in world-rank order; a spawned world runs on one node alone.
        int nodeRank = world.Spawned is null ? _launches.FindIndex(launch => launch.Key == agent) : 0;
        for (int local = 0; local < ranks.Count; local++)
        {
            var assignment = ranks[local];
            var launch = new RankLaunch { Rank = assignment.WorldRank, Program = assignment.Group.ProgramPath, WorkingDirectory = assignment.Group.WorkingDirectory };
            if (_staged.Of(assignment.Group) is { } program)
            {
                // Staged by --stage alone, its working directory is this machine's default: the agent's copy instead.
                (launch.Program, launch.StagedProgram) = (program.FileOf(assignment.Group.ProgramPath)!, program.Digest);
                if (!assignment.Group.Stage) launch.WorkingDirectory = "";
                if (!request.Staged.Contains(program.Manifest)) request.Staged.Add(program.Manifest);
            }
            launch.Arguments.AddRange(assignment.Group.Arguments);
            launch.Environment.Add(assignment.Group.Environment);
            launch.Environment[RankEnvironment.LocalRank] = local.ToString(CultureInfo.InvariantCulture);
            launch.Environment[RankEnvironment.LocalSize] = ranks.Count.ToString(CultureInfo.InvariantCulture);
            launch.Environment[RankEnvironment.NodeRank] = nodeRank.ToString(CultureInfo.InvariantCulture);
            if (_reportBindings) launch.Environment[RankEnvironment.ReportBindings] = "1";
            request.Ranks.Add(launch);
        }
        // Another node's launch may have failed already: start nothing for a job that is over.
        if (_end.IsCancellationRequested) return;
        int remaining = ranks.Count;
        using var channel = _gateways.AgentChannel(agent, place.Domain);
        using var abandon = new CancellationTokenSource();
        Task? kill = null;
        try
        {
            // On abort the agent is asked to kill this node's ranks while the launch is still read: it then reports
            // their exits and ends, so the job finishes only once its ranks are gone.
            using var onEnd = _end.Token.Register(() => Volatile.Write(ref kill, KillAsync(channel, abandon)));
            // The agent gets the files of its staged programs it lacks before the launch that runs them.
            await _staged.ShipAsync(channel, ranks.Select(assignment => _staged.Of(assignment.Group)).OfType<StagedPrograms.Program>(), abandon.Token).ConfigureAwait(false);
            using var call = new AgentClient(channel).Launch(request, cancellationToken: abandon.Token);
            await using var events = call.ResponseStream.ReadAllAsync(abandon.Token).GetAsyncEnumerator(abandon.Token);
            while (await NextAsync(events, name).ConfigureAwait(false))
            {
                var item = events.Current;
                switch (item.BodyCase)
                {
                    case LaunchEvent.BodyOneofCase.Started:
                        Interlocked.Increment(ref _launched);
                        await ProgressAsync().ConfigureAwait(false);
                        break;
                    case LaunchEvent.BodyOneofCase.Output:
                        await _feed.PublishAsync(new JobEvent { Output = item.Output }).ConfigureAwait(false);
                        break;
                    case LaunchEvent.BodyOneofCase.Joined:
                        await JoinedAsync(item.Joined.Rank, name).ConfigureAwait(false);
                        break;
                    case LaunchEvent.BodyOneofCase.Exited:
                        remaining--;
                        Interlocked.Increment(ref _exited);
                        var exited = item.Exited;
                        if (exited.ExitCode != 0)
                            Fail(exited.Rank, exited.ExitCode, exited.Killed ? "its agent killed it" : $"its process exited with code {exited.ExitCode}{(IsRegistered(exited.Rank) ? "" : " before registering with the master")}");
                        else if (!IsRegistered(exited.Rank) && LeftUnregistered(exited.Rank, name))
                            Fail(exited.Rank, 1, $"its process exited with code 0 on {name} before registering with the master (a rank program must call Pmpi.Environment.Run)");
                        else if (exited.HasFinalized && !exited.Finalized)
                            Fail(exited.Rank, 1, $"its process exited with code 0 on {name} without finalizing PMPI (Environment.Run returning, or its Environment disposed), so the ranks still running could wait for it forever");
                        await _feed.PublishAsync(new JobEvent { Exited = exited }).ConfigureAwait(false);
                        break;
                    case LaunchEvent.BodyOneofCase.Unresponsive:
                        var frozen = item.Unresponsive;
                        Fail(frozen.Rank, 1, $"its runtime sent no heartbeat for {frozen.SilentMilliseconds / 1000.0:F1} s: process {frozen.ProcessId} on {name} is stopped or frozen");
                        break;
                    case LaunchEvent.BodyOneofCase.Stopping:
                        Fail(-1, 1, $"{name} stopped: {item.Stopping.Reason}");
                        break;
                }
            }
            if (remaining > 0) Fail(-1, 1, $"{name} ended the launch with {remaining} ranks unaccounted for");
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.Cancelled && abandon.IsCancellationRequested)
        {
            // The agent did not confirm the kill in time; cancelling the launch makes it kill the ranks by itself.
        }
        catch (RpcException e) when (_end.IsCancellationRequested && e.StatusCode is StatusCode.Cancelled or StatusCode.DeadlineExceeded or StatusCode.Unavailable)
        {
        }
        catch (RpcException e)
        {
            Fail(-1, 1, RpcFailures.Unreached(e, _gateways.FirstHopTo(agent, place.Domain)) is { } why ? $"{name} cannot be reached: {why}" : $"{name} failed: {e.Status.Detail}");
        }
        if (Volatile.Read(ref kill) is { } pending) await pending.ConfigureAwait(false);
    }

    /// <summary>Asks an agent to kill the job's ranks; gives up on its launch after <see cref="KillGrace"/> either way.</summary>
    private async Task KillAsync(GrpcChannel channel, CancellationTokenSource abandon)
    {
        abandon.CancelAfter(KillGrace);
        try
        {
            await new AgentClient(channel).KillAsync(new KillRequest { JobId = Id, JobToken = Token }, deadline: DateTime.UtcNow + KillGrace).ResponseAsync.ConfigureAwait(false);
        }
        catch (RpcException)
        {
            // Unreachable or too slow: cancelling the launch is the other way to make an agent kill them.
            await abandon.CancelAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The next event of an agent's launch. The agent sends a heartbeat every second, so a wait longer than the
    /// heartbeat timeout means the agent is stopped, frozen or cut off: the job fails naming it, and the wait goes
    /// on until the abort abandons the launch. A timeout noticed well after it was due says that this process did not
    /// run meanwhile (stopped, as `pmpi run` stops itself with its embedded agent on Ctrl-Z, or starved), which proves
    /// nothing about the agent: the wait starts again.
    /// </summary>
    private async ValueTask<bool> NextAsync(IAsyncEnumerator<LaunchEvent> events, string agent)
    {
        var next = events.MoveNextAsync();
        if (next.IsCompleted) return await next.ConfigureAwait(false);
        var pending = next.AsTask();
        while (true)
        {
            long waiting = Stopwatch.GetTimestamp();
            try
            {
                return await pending.WaitAsync(_heartbeatTimeout).ConfigureAwait(false);
            }
            catch (TimeoutException) when (Stopwatch.GetElapsedTime(waiting) > _heartbeatTimeout + LateTimeout)
            {
                // This process was not running when the timeout fell due: wait again.
            }
            catch (TimeoutException)
            {
                Fail(-1, 1, $"{agent} sent no heartbeat for {_heartbeatTimeout.TotalSeconds:F0} s: it is stopped, frozen or cut off");
                return await pending.ConfigureAwait(false);
            }
        }
    }

    /// <summary>How late a heartbeat timeout may be noticed before the lateness, not the agent, is taken for the cause.</summary>
    private static readonly TimeSpan LateTimeout = TimeSpan.FromSeconds(1);

    private ValueTask ProgressAsync()
    {
        var progress = new Progress { JobId = Id, Size = Size, Launched = Volatile.Read(ref _launched), Registered = Volatile.Read(ref _registered), Exited = Volatile.Read(ref _exited) };
        return _feed.PublishAsync(new JobEvent { Progress = progress });
    }

    /// <summary>A failure's reason as the summary's last sentence: one full stop, whether the reason brought its own.</summary>
    private static string Sentence(string reason) => reason.EndsWith('.') ? reason : reason + ".";
}
