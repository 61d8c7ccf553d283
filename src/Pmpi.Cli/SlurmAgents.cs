using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using Pmpi.Agent.Computation;
using Pmpi.Rpc.Security;

namespace Pmpi.Cli;

/// <summary>
/// The agents `pmpi run` starts inside a Slurm allocation, as mpirun starts its daemons: one job step of one
/// `pmpi agent` per node, <c>srun --nodes=K --ntasks-per-node=1 --kill-on-bad-exit --overlap</c>, each on a free port
/// of every interface with the cluster credential, its ranks advertising the address its Slurm node name resolves to
/// there; the first node's agent is the job's master. They stop when their input ends (<c>--stop-at-input-end</c>):
/// disposing closes srun's input, so the step ends normally (no STEP CANCELLED), and if `pmpi run` dies the pipe
/// closes all the same. A credential made for the run alone is deleted then.
/// </summary>
/// <remarks>
/// (1) The credential: the caller's (--credentials, PMPI_CREDENTIALS), which must be at the same path on every node,
/// or one made for this run in ~/.pmpi/slurm-JOB-RANDOM (owner-only, on the home directory every node of a cluster
/// shares), naming the nodes. Only its directory's path reaches srun's command line, never a key.
/// (2) srun's output: each agent's listening line, tagged with its task (--label), gives its port; task i runs on
/// the allocation's node i. Its other lines (the agents' logs) are kept, the last few, for a failure's message.
/// </remarks>
internal sealed partial class SlurmAgents : IAsyncDisposable
{
    /// <summary>How long the agents have to start, and srun to end once their input closed.</summary>
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60), StopTimeout = TimeSpan.FromSeconds(20);

    private const int KeptLines = 40;

    private readonly Process _srun;
    private readonly string? _throwawayCredential;
    private readonly Queue<string> _lines = new();
    private readonly Task _stderr;

    private SlurmAgents(Process srun, string? throwawayCredential, ClusterCredentials credentials)
    {
        _srun = srun;
        _throwawayCredential = throwawayCredential;
        Security = RpcSecurity.MutualTls(credentials);
        _stderr = KeepAsync(srun.StandardError);
    }

    /// <summary>How `pmpi run` reaches the agents: mutual TLS with their credential.</summary>
    public RpcSecurity Security { get; }

    /// <summary>The computation's nodes: each node of the allocation, its agent's endpoint and its slots.</summary>
    public List<(string Name, string Agent, int Slots)> Nodes { get; } = [];

    /// <summary>The first node's agent, the job's master.</summary>
    public Uri Master => new($"https://{Nodes[0].Agent}");

    /// <summary>
    /// Starts the agents' step and waits until every agent listens. Null, with <paramref name="error"/> saying why
    /// (srun's and the agents' last words included), when they do not.
    /// </summary>
    /// <param name="given">The caller's credential, or null to make one for this run.</param>
    public static async Task<(SlurmAgents? Agents, string? Error)> StartAsync(SlurmAllocation allocation, ClusterCredentials? given, double heartbeatTimeout,
        double registerTimeout, CancellationToken cancellationToken)
    {
        string? throwaway = null;
        ClusterCredentials credentials;
        try
        {
            if (given is null)
            {
                string own = Path.Combine(System.Environment.GetFolderPath(System.Environment.SpecialFolder.UserProfile), ".pmpi");
                var home = OperatingSystem.IsWindows() ? Directory.CreateDirectory(own)
                    : Directory.CreateDirectory(own, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
                throwaway = Path.Combine(home.FullName, $"slurm-{allocation.JobId}-{Convert.ToHexStringLower(System.Security.Cryptography.RandomNumberGenerator.GetBytes(6))}");
                credentials = ClusterCredentials.Initialize(throwaway, allocation.Nodes.Select(node => node.Host));
            }
            else credentials = given;
        }
        catch (Exception e) when (e is CredentialException or IOException or UnauthorizedAccessException)
        {
            Delete(throwaway);
            return (null, $"pmpi run: cannot make a credential for the agents of Slurm job {allocation.JobId}: {e.Message} Give one with --credentials DIR.");
        }

        int count = allocation.Nodes.Count;
        int slots = allocation.Nodes.Max(node => node.Slots ?? 1);
        var start = new ProcessStartInfo("srun")
        {
            RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false,
        };
        // --overlap: ranks run inside this step, beside whatever other steps the job runs; --mpi=none: the agents are no
        // MPI tasks; --input=all: every agent reads the pipe whose end stops it.
        foreach (var argument in (string[])[$"--nodes={count}", $"--ntasks={count}", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "--overlap", "--mpi=none",
            "--cpu-bind=none", "--input=all", "--label", "--job-name=pmpi-agents",
            // The shell only puts the node's Slurm name into --rank-address; every other argument passes through "$@".
            "/bin/sh", "-c", "exec \"$@\" --rank-address \"$SLURMD_NODENAME\"", "sh", .. Self(), "agent", "--bind", "0.0.0.0", "--port", "0",
            "--slots", slots.ToString(CultureInfo.InvariantCulture), "--credentials", credentials.Directory, "--stop-at-input-end",
            "--heartbeat-timeout", heartbeatTimeout.ToString(CultureInfo.InvariantCulture), "--register-timeout", registerTimeout.ToString(CultureInfo.InvariantCulture)])
        {
            start.ArgumentList.Add(argument);
        }
        Process srun;
        try
        {
            srun = Process.Start(start)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Delete(throwaway);
            return (null, $"pmpi run: inside Slurm job {allocation.JobId} ({allocation.Description}) pmpi run starts its agents with srun, which cannot be run: {e.Message}");
        }
        var agents = new SlurmAgents(srun, throwaway, credentials);
        string? error;
        try
        {
            error = await agents.WaitForListeningAsync(allocation, cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Interrupted while the agents start: they stop as the run ends, before the cancellation goes on.
            await agents.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        if (error is null) return (agents, null);
        await agents.DisposeAsync().ConfigureAwait(false);
        return (null, $"{error}\n{string.Join('\n', agents.LastLines())}".TrimEnd());
    }

    /// <summary>
    /// Ends the agents' step: closes srun's input, so each agent stops (killing what ranks it still runs) and exits 0,
    /// then waits for srun; kills it (the step is then cancelled) only if it does not end in time. Deletes a credential made for the run.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            _srun.StandardInput.Close();
        }
        catch (IOException)
        {
            // srun has gone already.
        }
        using (var stop = new CancellationTokenSource(StopTimeout))
        {
            try
            {
                await _srun.WaitForExitAsync(stop.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                _srun.Kill();
                await _srun.WaitForExitAsync().ConfigureAwait(false);
            }
        }
        await _stderr.ConfigureAwait(false);
        if (_srun.ExitCode != 0 && Nodes.Count > 0)
            await Console.Error.WriteLineAsync($"pmpi run: the agents' step ended with {_srun.ExitCode}:\n{string.Join('\n', LastLines())}").ConfigureAwait(false);
        _srun.Dispose();
        Delete(_throwawayCredential);
    }

    /// <summary>Reads the listening lines; null once every node's agent listens, else why not.</summary>
    private async Task<string?> WaitForListeningAsync(SlurmAllocation allocation, CancellationToken cancellationToken)
    {
        var ports = new int?[allocation.Nodes.Count];
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(StartTimeout);
        try
        {
            while (ports.Any(port => port is null))
            {
                if (await _srun.StandardOutput.ReadLineAsync(deadline.Token).ConfigureAwait(false) is not { } line)
                    return $"pmpi run: the agents' step (srun) on Slurm job {allocation.JobId} ({allocation.Description}) ended before every agent listened.";
                var listening = ListeningLine().Match(line);
                if (listening.Success && int.Parse(listening.Groups[1].Value, CultureInfo.InvariantCulture) is var task && task < ports.Length)
                    ports[task] = new Uri(listening.Groups[2].Value).Port;
                else Keep(line);
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return $"pmpi run: the agents on Slurm job {allocation.JobId} ({allocation.Description}) did not all listen within {StartTimeout.TotalSeconds:0} s.";
        }
        for (int i = 0; i < ports.Length; i++)
        {
            var node = allocation.Nodes[i];
            Nodes.Add((SpmdComputation.NameOf(node.Host), $"{node.Host}:{ports[i]}", node.Slots ?? 1));
        }
        // Nothing more is parsed; the rest is kept for a failure's message, and srun must not block on a full pipe.
        _ = KeepAsync(_srun.StandardOutput);
        return null;
    }

    private async Task KeepAsync(StreamReader reader)
    {
        try
        {
            while (await reader.ReadLineAsync().ConfigureAwait(false) is { } line) Keep(line);
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            // srun has gone.
        }
    }

    private void Keep(string line)
    {
        lock (_lines)
        {
            _lines.Enqueue(line);
            if (_lines.Count > KeptLines) _lines.Dequeue();
        }
    }

    private string[] LastLines()
    {
        lock (_lines) return [.. _lines];
    }

    /// <summary>How to run this pmpi again: the native executable, or the dotnet host and pmpi.dll.</summary>
    private static string[] Self()
    {
        string process = System.Environment.ProcessPath ?? "pmpi";
        return Path.GetFileNameWithoutExtension(process) == "dotnet" ? [process, Path.Combine(AppContext.BaseDirectory, "pmpi.dll")] : [process];
    }

    private static void Delete(string? directory)
    {
        if (directory is null) return;
        try
        {
            Directory.Delete(directory, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }

    /// <summary>"3: pmpi agent listening on https://0.0.0.0:41234 (slots 4)", as srun --label tags task 3's line.</summary>
    [GeneratedRegex(@"^\s*(\d+): pmpi agent listening on (\S+) ")]
    private static partial Regex ListeningLine();
}
