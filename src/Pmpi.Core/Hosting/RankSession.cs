using Pmpi.Collectives;
using Pmpi.Devices.InProcess;
using Pmpi.Hosting.Pmi;
using Pmpi.Payloads;

namespace Pmpi.Hosting;

/// <summary>
/// This process as one rank, from MPI_Init to MPI_Finalize: the rank an agent launched (its gRPC device, registered
/// with the master), the rank a PMI launcher started (joined through the launcher's key-value space) or, run
/// directly, a world of one (MPI's singleton init). Both <c>Environment.Run</c> and the constructor form go through
/// here, so a launched program is the same rank whichever it uses.
/// </summary>
internal sealed class RankSession
{
    private readonly int? _rank; // the launched rank's job rank; null for a singleton
    private readonly IDisposable _transport; // the launched rank's endpoint, links and master line, or the singleton's device
    private readonly UnhandledExceptionEventHandler? _onUnhandled;
    private bool _finished;

    private RankSession(int? rank, RankRuntime runtime, IDisposable transport)
    {
        _rank = rank;
        Runtime = runtime;
        _transport = transport;
        if (rank is null) return;
        // An exception escaping Main ends the process without unwinding, so Dispose never runs: report it to the
        // master (or the PMI launcher) here, so the job ends at once naming this rank instead of waiting for the exit code.
        _onUnhandled = (_, e) => Fail(e.ExceptionObject as Exception ?? new InvalidOperationException($"{e.ExceptionObject}"));
        AppDomain.CurrentDomain.UnhandledException += _onUnhandled;
    }

    public RankRuntime Runtime { get; }

    /// <summary>Whether a launcher (an agent, or a PMI launcher) started this process as a rank of a larger job.</summary>
    public bool IsLaunched => _rank is not null;

    /// <summary>
    /// Starts this process's rank as <paramref name="launcher"/> started it, reading who it is from
    /// <paramref name="read"/>, or a singleton world; makes it the calling flow's rank.
    /// </summary>
    public static RankSession Start(Launcher launcher, Func<string, string?> read, PayloadSettings payloads, CollectiveOptions collectives)
    {
        RankSession session;
        switch (launcher)
        {
            case Launcher.Agent:
                var identity = RankIdentity.FromEnvironment(read)!;
                AgentWatchdog.Start(identity);
                RankHeartbeat.Start(identity);
                var launched = LaunchedRank.StartAsync(identity, CancellationToken.None).GetAwaiter().GetResult();
                launched.BindToCore();
                session = new RankSession(identity.Rank, new RankRuntime(launched.Device, launched.Master, payloads, collectives, spawner: launched) { Place = identity.Place }, launched);
                if (launched.SpawnedBy is { } spawnedBy) Intercommunicator.ToParents(session.Runtime, spawnedBy.Context, [.. spawnedBy.Parents]);
                break;
            case Launcher.Pmi:
                var pmi = PmiClient.Connect(read)!;
                var started = PmiRank.Start(pmi, read);
                session = new RankSession(started.Rank, new RankRuntime(started.Device, started, payloads, collectives) { Place = started.Place }, started);
                break;
            default:
                var (device, control) = new InProcessJob(1).Start(0);
                session = new RankSession(null, new RankRuntime(device, control, payloads, collectives), device);
                break;
        }
        RankRuntime.Current = session.Runtime;
        return session;
    }

    /// <summary>
    /// MPI_Finalize: a barrier, so no rank closes its endpoint while a peer may still need it, then the device closes.
    /// The barrier spans the connected ranks (MPI-4.1 §11.10.4): the world, then its parents and each world it spawned.
    /// Idempotent.
    /// </summary>
    public void Finish()
    {
        if (_finished) return;
        _finished = true;
        if (_onUnhandled is not null) AppDomain.CurrentDomain.UnhandledException -= _onUnhandled;
        try
        {
            Runtime.World.Barrier();
            foreach (var connected in Runtime.Connected) connected.Barrier();
            if (IsLaunched) RankHeartbeat.ReportFinalized();
        }
        finally
        {
            _transport.Dispose();
            if (RankRuntime.Current == Runtime) RankRuntime.Current = null;
        }
    }

    /// <summary>
    /// Ends a launched rank that failed: prints why, reports to the master or PMI launcher (unless the job was already
    /// aborted, which it knows), and exits with its Abort code, or 1 for an exception. Does not return.
    /// </summary>
    public void Fail(Exception error)
    {
        var code = (error as MpiException)?.AbortCode ?? 1;
        // An abort's message names its cause (the rank that called Abort, or failed); where it surfaced here adds
        // nothing, as MPI_Abort prints one line. Any other error keeps its stack trace: it is the program's own bug.
        Console.Error.WriteLine(error is MpiException { ErrorClass: ErrorClass.Aborted } ? error.Message : $"Rank {_rank} failed: {error}");
        if (error is not MpiException { ErrorClass: ErrorClass.Aborted })
            Runtime.Abort(new MpiException(ErrorClass.Aborted, $"Rank {_rank} failed: {error.Message}", error) { AbortCode = code });
        Console.Out.Flush();
        System.Environment.Exit(code);
    }
}
