using System.Diagnostics;
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
}

/// <summary>
/// Starts and ends PMPI for a program (MPI_Init/MPI_Finalize), and offers the process-wide queries (wall time,
/// processor name, abort). <see cref="Run(ref string[], Action{Intracommunicator})"/> is the usual entry point.
/// </summary>
public sealed class Environment : IDisposable
{
    /// <summary>The program argument that sets the number of in-process ranks: <c>--pmpi-ranks N</c>.</summary>
    public const string RanksArgument = "--pmpi-ranks";

    private readonly RankRuntime _runtime;

    /// <summary>
    /// Initialises PMPI for this thread as a world of one rank (an MPI singleton), removing PMPI's own arguments from
    /// <paramref name="args"/>. Use <see cref="Run(ref string[], Action{Intracommunicator})"/> for several ranks.
    /// </summary>
    public Environment(ref string[] args)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (RankRuntime.Current is not null) throw new MpiException(ErrorClass.InvalidArgument, "PMPI is already initialised on this thread.");
        args = TakeRanks(args, out _);
        var (device, control) = new InProcessJob(1).Start(0);
        _runtime = new RankRuntime(device, control, JsonPayloadSerializer.Default);
        RankRuntime.Current = _runtime;
    }

    /// <summary>Whether PMPI is initialised on this thread (MPI_Initialized).</summary>
    public static bool Initialized => RankRuntime.Current is not null;

    /// <summary>Wall-clock seconds since an arbitrary origin, for timing (MPI_Wtime).</summary>
    public static double Time => Stopwatch.GetTimestamp() / (double)Stopwatch.Frequency;

    /// <summary>Resolution of <see cref="Time"/> in seconds (MPI_Wtick).</summary>
    public static double TimeResolution => 1.0 / Stopwatch.Frequency;

    /// <summary>The name of the node the calling rank runs on (MPI_Get_processor_name).</summary>
    public static string ProcessorName => Communicator.World.Runtime.Device.ProcessorName;

    /// <summary>Aborts every rank of the job with <paramref name="errorCode"/> (MPI_Abort); does not return.</summary>
    public static void Abort(int errorCode) => Communicator.World.Abort(errorCode);

    /// <summary>Finalises PMPI on this thread (MPI_Finalize).</summary>
    public void Dispose()
    {
        if (RankRuntime.Current == _runtime) RankRuntime.Current = null;
        _runtime.Device.Dispose();
    }

    /// <summary>
    /// Runs <paramref name="body"/> on every rank and returns when all have finished. The number of ranks comes from
    /// <c>--pmpi-ranks N</c> in <paramref name="args"/> (removed from it), else the PMPI_RANKS environment variable,
    /// else 1; the ranks are threads of this process sharing memory.
    /// </summary>
    /// <exception cref="MpiException">A rank threw or called Abort; the message names the first rank that failed.</exception>
    public static void Run(ref string[] args, Action<Intracommunicator> body)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(body);
        args = TakeRanks(args, out var ranks);
        if (RankIdentity.FromEnvironment(System.Environment.GetEnvironmentVariable) is { } identity) RunLaunchedRank(identity, body);
        else Run(ranks, body);
    }

    /// <summary>
    /// Runs this process as one rank of a job an agent launched: the gRPC device, then <paramref name="body"/>, then
    /// a barrier so no rank closes its endpoint while a peer may still need it (MPI_Finalize). A rank that fails
    /// reports to the master and exits with its Abort code, or 1 for an exception, after printing why.
    /// </summary>
    private static void RunLaunchedRank(RankIdentity identity, Action<Intracommunicator> body)
    {
        AgentWatchdog.Start(identity);
        using var rank = LaunchedRank.StartAsync(identity, CancellationToken.None).GetAwaiter().GetResult();
        var runtime = new RankRuntime(rank.Device, rank.Master, JsonPayloadSerializer.Default);
        RankRuntime.Current = runtime;
        try
        {
            body(runtime.World);
            runtime.World.Barrier();
        }
        catch (Exception e)
        {
            var code = (e as MpiException)?.AbortCode ?? 1;
            Console.Error.WriteLine($"Rank {identity.Rank} failed: {e}");
            if (e is not MpiException { ErrorClass: ErrorClass.Aborted })
                runtime.Abort(new MpiException(ErrorClass.Aborted, $"Rank {identity.Rank} failed: {e.Message}", e) { AbortCode = code });
            Console.Out.Flush();
            System.Environment.Exit(code);
        }
        finally
        {
            RankRuntime.Current = null;
        }
    }

    /// <summary>Runs <paramref name="body"/> on the ranks PMPI_RANKS names (1 when unset), like the args form without arguments.</summary>
    public static void Run(Action<Intracommunicator> body)
    {
        string[] none = [];
        Run(ref none, body);
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
                    var runtime = new RankRuntime(device, control, options.Serializer);
                    RankRuntime.Current = runtime;
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

    private static string[] TakeRanks(string[] args, out int ranks)
    {
        ranks = int.TryParse(System.Environment.GetEnvironmentVariable("PMPI_RANKS"), out var fromEnvironment) ? fromEnvironment : 1;
        int at = Array.IndexOf(args, RanksArgument);
        if (at < 0) return args;
        if (at + 1 >= args.Length || !int.TryParse(args[at + 1], out ranks) || ranks < 1)
            throw new MpiException(ErrorClass.InvalidArgument, $"{RanksArgument} needs a positive number of ranks, e.g. '{RanksArgument} 4'.");
        return [.. args[..at], .. args[(at + 2)..]];
    }
}
