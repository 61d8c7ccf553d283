using System.Diagnostics;
using Pmpi.Collectives;
using Pmpi.Devices;
using Pmpi.Devices.InProcess;
using Pmpi.Hosting;
using Pmpi.Payloads;

namespace Pmpi;

/// <summary>Settings of a job started by <see cref="Environment.Run(int, Action{Intracommunicator}, EnvironmentOptions?)"/>.</summary>
public sealed class EnvironmentOptions
{
    /// <summary>Aborts the job if it runs longer. Defaults to null: no limit.</summary>
    public TimeSpan? Timeout { get; init; }

    /// <summary>Serializes payloads that are not primitives, unmanaged structs or strings. Defaults to <see cref="JsonPayloadSerializer.Default"/>.</summary>
    public IPayloadSerializer Serializer { get; init; } = JsonPayloadSerializer.Default;

    /// <summary>
    /// Whether [Serializable] objects keep their shared and cyclic references across a send (Motor's reference
    /// propagation; what BinaryFormatter did in MPI.NET). Defaults to false: an object reachable twice in what is sent
    /// is an error at the sender, so a graph is never silently copied apart.
    /// </summary>
    public bool PreserveReferences { get; init; }

    /// <summary>
    /// The sizes at which the collectives change algorithm, for every communicator of the job. Defaults to
    /// <see cref="CollectiveOptions.Default"/>, as measured; internal, for Pmpi.Bench to measure either side.
    /// </summary>
    internal CollectiveOptions Collectives { get; init; } = CollectiveOptions.Default;

    internal PayloadSettings Payloads => new(Serializer, PreserveReferences);
}

/// <summary>
/// Starts and ends PMPI for a program (MPI_Init/MPI_Finalize), and offers the process-wide queries (wall time,
/// processor name, abort). <see cref="Run(ref string[], Action{Intracommunicator}, bool)"/> is the usual entry point;
/// MPI.NET's constructor form, <c>using (new Environment(ref args)) { ... }</c>, works too.
/// </summary>
/// <remarks>
/// Launched by <c>pmpi run</c> (or any agent), or by a PMI launcher (Hydra's <c>mpiexec</c>, <c>srun --mpi=pmi2</c>),
/// both forms make this process that rank of the job's world. Started by a launcher PMPI cannot join (Open MPI's
/// <c>mpirun</c>, srun without a PMI), the process says so and exits with code 1 rather than run alone. Run directly,
/// <see cref="Run(ref string[], Action{Intracommunicator}, bool)"/> runs <c>--pmpi-ranks N</c> ranks as threads and the
/// constructor makes a world of one (MPI's singleton init). Initialised means initialised for the calling rank: a
/// process, or a thread of an in-process job (and the threads and tasks it starts).
/// </remarks>
public sealed class Environment : IDisposable
{
    /// <summary>The program argument that sets the number of in-process ranks: <c>--pmpi-ranks N</c>.</summary>
    public const string RanksArgument = "--pmpi-ranks";

    private static readonly AsyncLocal<bool> FinalizedRank = new();
    private static readonly AsyncLocal<Threading?> ProvidedThreading = new();

    // Null when this instance found PMPI already initialised and joined it: only the initialising one finalizes.
    private RankSession? _session;

    /// <summary>
    /// Initialises PMPI (MPI_Init), removing PMPI's own arguments from <paramref name="args"/>: launched by an agent or
    /// a PMI launcher, this process becomes that rank of the job's world; run directly, a world of one. Dispose finalizes.
    /// </summary>
    /// <exception cref="ObjectDisposedException">PMPI was already finalized here; MPI initialises once (MPI-4.1 §11.2.1).</exception>
    /// <exception cref="MpiException"><c>--pmpi-ranks</c> asked for more than one rank, which only <c>Run</c> or <c>pmpi run -n</c> can start.</exception>
    public Environment(ref string[] args)
        : this(ref args, Threading.Serialized, new EnvironmentOptions())
    {
    }

    /// <summary>Initialises PMPI asking for a level of thread support; <see cref="Threading"/> tells what was provided.</summary>
    public Environment(ref string[] args, Threading threading)
        : this(ref args, threading, new EnvironmentOptions())
    {
    }

    /// <summary>Initialises PMPI with <paramref name="options"/> (serializer, reference preservation; the timeout applies to <c>Run</c> only).</summary>
    public Environment(ref string[] args, EnvironmentOptions options)
        : this(ref args, Threading.Serialized, options)
    {
    }

    private Environment(ref string[] args, Threading threading, EnvironmentOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        args = TakeRanks(args ?? [], out var ranks, out var ranksGiven);
        if (Initialized) return;
        if (Finalized) throw AlreadyFinalized();
        var launcher = RankLaunch.Detect(System.Environment.GetEnvironmentVariable);
        if (launcher == Launcher.None && ranksGiven && ranks > 1)
            throw new MpiException(ErrorClass.InvalidArgument, $"{ranks} ranks were asked for, but new Environment(ref args) makes this process one rank: " +
                $"launch it with 'pmpi run -n {ranks} <program>', or use Environment.Run(ref args, world => ...), which runs {ranks} ranks as threads.");
        _session = RankSession.Start(launcher, System.Environment.GetEnvironmentVariable, options.Payloads, options.Collectives);
        ProvidedThreading.Value = threading;
    }

    /// <summary>Whether PMPI is initialised for the calling rank and not yet finalized (MPI_Initialized).</summary>
    public static bool Initialized => RankRuntime.Current is not null;

    /// <summary>Whether PMPI was finalized for the calling rank (MPI_Finalized); it cannot be initialised again.</summary>
    public static bool Finalized => FinalizedRank.Value;

    private static ObjectDisposedException AlreadyFinalized() =>
        new(nameof(Environment), "PMPI was already finalized on this rank; MPI allows one initialization per process.");

    /// <summary>
    /// The thread support provided: what was asked for (PMPI's operations are safe from any thread), or
    /// <see cref="Threading.Serialized"/> when the rank was started by <c>Run</c>.
    /// </summary>
    public static Threading Threading => ProvidedThreading.Value ?? Threading.Serialized;

    /// <summary>Whether the calling thread is the one that initialised its rank (MPI_Is_thread_main).</summary>
    public static bool IsMainThread => Communicator.World.Runtime.MainThreadId == System.Environment.CurrentManagedThreadId;

    /// <summary>Wall-clock seconds since an arbitrary origin, for timing (MPI_Wtime).</summary>
    public static double Time => Stopwatch.GetTimestamp() / (double)Stopwatch.Frequency;

    /// <summary>Resolution of <see cref="Time"/> in seconds (MPI_Wtick).</summary>
    public static double TimeResolution => 1.0 / Stopwatch.Frequency;

    /// <summary>Whether <see cref="Time"/> agrees across ranks (MPI_WTIME_IS_GLOBAL): no, each node has its own clock.</summary>
    public static bool IsTimeGlobal => false;

    /// <summary>The largest tag a program may use (MPI_TAG_UB).</summary>
    public static int MaxTag => Communicator.MaxTag;

    /// <summary>The rank of a host process (MPI_HOST): null, there is none.</summary>
    public static int? HostRank => null;

    /// <summary>Which rank may do I/O (MPI_IO): <see cref="Communicator.AnySource"/>, every rank can (each writes to its own console, which its agent forwards).</summary>
    public static int? IORank => Communicator.AnySource;

    /// <summary>The name of the node the calling rank runs on (MPI_Get_processor_name).</summary>
    public static string ProcessorName => Communicator.World.Runtime.Device.ProcessorName;

    /// <summary>
    /// The calling rank's place among its world's ranks on its node, from 0 in rank order (Open MPI's
    /// OMPI_COMM_WORLD_LOCAL_RANK): e.g. which of the node's GPUs is its own. Ranks that are threads of one process
    /// share one node. A launched process reads the same from PMPI_LOCAL_RANK, even before PMPI starts.
    /// </summary>
    /// <exception cref="InvalidOperationException">The agent that launched this rank is older than this PMPI and did not say.</exception>
    public static int LocalRank => Place.LocalRank;

    /// <summary>How many ranks of the calling rank's world run on its node (PMPI_LOCAL_SIZE).</summary>
    /// <exception cref="InvalidOperationException">The agent that launched this rank is older than this PMPI and did not say.</exception>
    public static int LocalSize => Place.LocalSize;

    /// <summary>
    /// Which of its world's nodes the calling rank runs on, from 0, numbered in the order of each node's first rank
    /// (PMPI_NODE_RANK; torchrun's NODE_RANK).
    /// </summary>
    /// <exception cref="InvalidOperationException">The agent that launched this rank is older than this PMPI and did not say.</exception>
    public static int NodeRank => Place.NodeRank;

    private static NodePlace Place => Communicator.World.Runtime.Place
        ?? throw new InvalidOperationException($"The agent that launched rank {Communicator.World.Rank} did not say where it runs ({Rpc.RankEnvironment.LocalRank} is unset): it is older than this PMPI.");

    /// <summary>Aborts every rank of the job with <paramref name="errorCode"/> (MPI_Abort); does not return.</summary>
    public static void Abort(int errorCode) => Communicator.World.Abort(errorCode);

    /// <summary>
    /// Finalizes PMPI (MPI_Finalize): a barrier of the world, then the rank's connections close. Does nothing on an
    /// instance that joined an environment initialised before it, or the second time.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _session, null) is not { } session) return;
        session.Finish();
        FinalizedRank.Value = true;
    }

    /// <summary>
    /// Runs <paramref name="body"/> on every rank and returns when all have finished. Launched by an agent or a PMI launcher, this
    /// process is one rank of the job; run directly, the ranks are threads of this process sharing memory, as many as
    /// <c>--pmpi-ranks N</c> in <paramref name="args"/> (removed from it) says, else the PMPI_RANKS environment
    /// variable, else 1. Called where PMPI is already initialised, it runs <paramref name="body"/> on that world.
    /// </summary>
    /// <param name="args">The program's arguments; PMPI's own are removed.</param>
    /// <param name="body">What every rank runs, given the world.</param>
    /// <param name="cleanupEnvironment">
    /// Whether to finalize when <paramref name="body"/> returns (MPI.NET's parameter). Launched by an agent, false
    /// leaves this rank up for a later Run or constructor, and lets an exception reach the caller instead of ending
    /// the job; true, a failing rank reports to the master and exits with its Abort code (1 for an exception). Ranks
    /// run as threads always end with the call.
    /// </param>
    /// <exception cref="MpiException">A rank threw or called Abort; the message names the first rank that failed.</exception>
    /// <exception cref="ObjectDisposedException">A Run or Dispose already finalized PMPI here; MPI initialises once (an <see cref="InvalidOperationException"/>, as MPI.NET throws).</exception>
    public static void Run(ref string[] args, Action<Intracommunicator> body, bool cleanupEnvironment = true) =>
        Run(ref args, Threading.Serialized, body, cleanupEnvironment);

    /// <summary>Runs <paramref name="body"/> on every rank asking for a level of thread support (MPI.NET's form); see <see cref="Run(ref string[], Action{Intracommunicator}, bool)"/>.</summary>
    public static void Run(ref string[] args, Threading threading, Action<Intracommunicator> body, bool cleanupEnvironment = true) =>
        Run(ref args, threading, body, cleanupEnvironment, new EnvironmentOptions());

    /// <summary>Runs <paramref name="body"/> on every rank with <paramref name="options"/>; see <see cref="Run(ref string[], Action{Intracommunicator}, bool)"/>.</summary>
    public static void Run(ref string[] args, Action<Intracommunicator> body, EnvironmentOptions options) =>
        Run(ref args, Threading.Serialized, body, cleanupEnvironment: true, options);

    /// <summary>Runs <paramref name="body"/> on the ranks PMPI_RANKS names (1 when unset), like the args form without arguments.</summary>
    public static void Run(Action<Intracommunicator> body, bool cleanupEnvironment = true)
    {
        string[] none = [];
        Run(ref none, body, cleanupEnvironment);
    }

    private static void Run(ref string[] args, Threading threading, Action<Intracommunicator> body, bool cleanupEnvironment, EnvironmentOptions options)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentNullException.ThrowIfNull(options);
        args ??= [];
        if (RankRuntime.Current is { } current)
        {
            // Already a rank (a constructor form, an earlier Run that left it up, or a Run inside a rank's body): never
            // a second world, and the environment that initialised is the one that finalizes.
            body(current.World);
            return;
        }
        if (RankLaunch.Detect(System.Environment.GetEnvironmentVariable) == Launcher.None)
        {
            // Ranks as threads of this process: as a launched rank's, their Run initialises once (MPI.NET's
            // EnvironmentDisposalThrowsTest), so finalizing marks this caller too, and a later Run throws.
            if (Finalized) throw AlreadyFinalized();
            args = TakeRanks(args, out var ranks, out _);
            Run(ranks, body, options);
            if (cleanupEnvironment) FinalizedRank.Value = true;
            return;
        }
        var environment = new Environment(ref args, threading, options);
        var session = environment._session!;
        if (!cleanupEnvironment)
        {
            body(session.Runtime.World);
            return;
        }
        try
        {
            body(session.Runtime.World);
            environment.Dispose();
        }
        catch (Exception e)
        {
            session.Fail(e);
        }
    }

    /// <summary>Runs <paramref name="body"/> on <paramref name="ranks"/> in-process ranks and returns when all have finished.</summary>
    /// <exception cref="MpiException">A rank threw or called Abort; the message names the first rank that failed.</exception>
    /// <exception cref="TimeoutException">The job ran past <see cref="EnvironmentOptions.Timeout"/>; it was aborted.</exception>
    public static void Run(int ranks, Action<Intracommunicator> body, EnvironmentOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        if (ranks < 1) throw new MpiException(ErrorClass.InvalidArgument, $"A job needs at least one rank; {ranks} were asked for.");
        using var job = new InProcessJob(ranks);
        Run(job, body, options);
    }

    /// <summary>Runs <paramref name="body"/> on every rank of <paramref name="job"/>, one thread each, and returns when all have finished.</summary>
    internal static void Run(IThreadedJob job, Action<Intracommunicator> body, EnvironmentOptions? options = null)
    {
        options ??= new EnvironmentOptions();
        int ranks = job.Size;
        (int Rank, Exception Error)? firstFailure = null;
        var gate = new Lock();

        var threads = new Thread[ranks];
        for (int i = 0; i < ranks; i++)
        {
            int rank = i;
            threads[i] = new Thread(() =>
            {
                try
                {
                    var (device, control) = job.Start(rank);
                    var runtime = new RankRuntime(device, control, options.Payloads, options.Collectives);
                    RankRuntime.Current = runtime;
                    FinalizedRank.Value = false;
                    body(runtime.World);
                }
                catch (Exception e)
                {
                    // A rank woken by another's abort fails too; the rank that caused it is the one to report.
                    lock (gate)
                    {
                        if (firstFailure is not { } first || (IsWokenByAbort(first.Error) && !IsWokenByAbort(e))) firstFailure = (rank, e);
                    }
                    job.Abort(e as MpiException is { ErrorClass: ErrorClass.Aborted } aborted
                        ? aborted
                        : new MpiException(ErrorClass.Aborted, $"The job was aborted because rank {rank} failed: {e.Message}", e));
                }
                finally
                {
                    RankRuntime.Current = null;
                }
            })
            { IsBackground = true, Name = $"PMPI rank {rank}" };
        }
        foreach (var thread in threads) thread.Start();

        if (!JoinAll(threads, options.Timeout))
        {
            job.Abort(new MpiException(ErrorClass.Aborted, $"The job was aborted after its timeout of {options.Timeout}."));
            JoinAll(threads, TimeSpan.FromSeconds(5));
            var running = Enumerable.Range(0, ranks).Where(r => threads[r].IsAlive).ToArray();
            throw new TimeoutException($"The job of {ranks} ranks did not finish within {options.Timeout}." +
                (running.Length > 0 ? $" Ranks still running after the abort: {string.Join(", ", running)}." : ""));
        }
        if (firstFailure is var (failedRank, error))
        {
            throw new MpiException(ErrorClass.Aborted, $"Rank {failedRank} failed: {error.Message}", error)
            {
                AbortCode = (error as MpiException)?.AbortCode,
            };
        }
    }

    /// <summary>Whether <paramref name="error"/> is an operation failing because the job was aborted elsewhere.</summary>
    private static bool IsWokenByAbort(Exception error) =>
        error is MpiException { ErrorClass: ErrorClass.Aborted, InnerException: MpiException { ErrorClass: ErrorClass.Aborted } };

    private static bool JoinAll(Thread[] threads, TimeSpan? timeout)
    {
        var deadline = timeout is { } t ? Stopwatch.GetTimestamp() + (long)(t.TotalSeconds * Stopwatch.Frequency) : long.MaxValue;
        foreach (var thread in threads)
        {
            if (deadline == long.MaxValue)
            {
                thread.Join();
                continue;
            }
            var remaining = TimeSpan.FromSeconds(Math.Max(0, (deadline - Stopwatch.GetTimestamp()) / (double)Stopwatch.Frequency));
            if (!thread.Join(remaining)) return false;
        }
        return true;
    }

    private static string[] TakeRanks(string[] args, out int ranks, out bool given)
    {
        given = int.TryParse(System.Environment.GetEnvironmentVariable("PMPI_RANKS"), out ranks);
        if (!given) ranks = 1;
        int at = Array.IndexOf(args, RanksArgument);
        if (at < 0) return args;
        given = true;
        if (at + 1 >= args.Length || !int.TryParse(args[at + 1], out ranks) || ranks < 1)
            throw new MpiException(ErrorClass.InvalidArgument, $"{RanksArgument} needs a positive number of ranks, e.g. '{RanksArgument} 4'.");
        return [.. args[..at], .. args[(at + 2)..]];
    }
}
