using System.Globalization;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A Slurm cluster of one node, this machine, from Debian's packages (slurmctld, slurmd, slurm-client, munge), in a
/// scratch directory of its own: munged with a key made for it (so only this cluster's commands authenticate; the
/// Slurm daemons listen on every address), then slurmctld and slurmd on free ports, the node reached at 127.0.0.1.
/// Needs root, as slurmd does to start tasks as their user. Every daemon is killed by its process id at the end.
/// </summary>
public sealed class SlurmCluster : IAsyncLifetime
{
    private const string Install = "Install them with: apt-get install -y slurmctld slurmd slurm-client munge; CI installs the packages listed in .ci/apt-packages.";

    private readonly ScratchDirectory _scratch = new();
    private readonly List<ChildProcess> _daemons = [];

    /// <summary>The configuration file every Slurm command of this cluster reads (SLURM_CONF).</summary>
    private string Configuration => Path.Combine(_scratch.Path, "slurm.conf");

    /// <summary>What the daemons printed, for failure messages.</summary>
    internal string Transcript => string.Join("", _daemons.Select(d => d.Transcript));

    public async Task InitializeAsync()
    {
        if (!OperatingSystem.IsLinux() || !SlurmFactAttribute.CanRun) return;
        foreach (var program in new[] { "/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/srun", "/usr/bin/sinfo" })
            if (!File.Exists(program)) Assert.Fail($"{program} is missing. {Install}");

        var munge = Directory.CreateDirectory(Path.Combine(_scratch.Path, "munge")).FullName;
        var key = Path.Combine(munge, "munge.key");
        File.WriteAllBytes(key, System.Security.Cryptography.RandomNumberGenerator.GetBytes(1024));
        File.SetUnixFileMode(key, UnixFileMode.UserRead);
        var socket = Path.Combine(munge, "munge.socket");
        Start("/usr/sbin/munged", ["--foreground", "--force", $"--key-file={key}", $"--socket={socket}", $"--pid-file={munge}/munged.pid",
            $"--log-file={munge}/munged.log", $"--seed-file={munge}/munged.seed"]);
        await WaitForAsync(() => Task.FromResult(File.Exists(socket)), "munged's socket");

        string node = System.Environment.MachineName;
        int controllerPort = PmpiCli.FreePort(), nodePort = PmpiCli.FreePort();
        File.WriteAllText(Configuration, string.Create(CultureInfo.InvariantCulture, $"""
            ClusterName=pmpitest
            SlurmctldHost={node}(127.0.0.1)
            SlurmctldPort={controllerPort}
            SlurmdPort={nodePort}
            SlurmUser=root
            AuthType=auth/munge
            AuthInfo=socket={socket}
            CredType=cred/munge
            StateSaveLocation={Directory.CreateDirectory(Path.Combine(_scratch.Path, "state")).FullName}
            SlurmdSpoolDir={Directory.CreateDirectory(Path.Combine(_scratch.Path, "spool")).FullName}
            SlurmctldPidFile={_scratch.Path}/slurmctld.pid
            SlurmdPidFile={_scratch.Path}/slurmd.pid
            ProctrackType=proctrack/linuxproc
            TaskPlugin=task/none
            SelectType=select/cons_tres
            SelectTypeParameters=CR_Core
            MpiDefault=none
            JobAcctGatherType=jobacct_gather/none
            AccountingStorageType=accounting_storage/none
            MailProg=/bin/true
            ReturnToService=2
            NodeName={node} NodeAddr=127.0.0.1 CPUs={System.Environment.ProcessorCount} State=UNKNOWN
            PartitionName=pmpi Nodes={node} Default=YES MaxTime=INFINITE State=UP

            """));
        Start("/usr/sbin/slurmctld", ["-D", "-i", "-f", Configuration]);
        Start("/usr/sbin/slurmd", ["-D", "-N", node, "-f", Configuration]);
        await WaitForAsync(NodeIdleAsync, "the node to be idle in sinfo");
    }

    /// <summary>Starts `srun <paramref name="arguments"/>` in this cluster, with <paramref name="environment"/> added to what its tasks inherit.</summary>
    internal ChildProcess Srun(IEnumerable<string> arguments, IReadOnlyDictionary<string, string?>? environment = null) =>
        ChildProcess.Start("/usr/bin/srun", arguments, WithConfiguration(environment));

    /// <summary><paramref name="environment"/> with SLURM_CONF naming this cluster's configuration.</summary>
    private Dictionary<string, string?> WithConfiguration(IReadOnlyDictionary<string, string?>? environment) =>
        new(environment ?? new Dictionary<string, string?>()) { ["SLURM_CONF"] = Configuration };

    /// <summary>Starts `salloc <paramref name="arguments"/>` (its options, then the command to run in the allocation) in this cluster.</summary>
    internal ChildProcess Salloc(IEnumerable<string> arguments, IReadOnlyDictionary<string, string?>? environment = null) =>
        ChildProcess.Start("/usr/bin/salloc", arguments, WithConfiguration(environment));

    /// <summary>
    /// Submits a batch job, `sbatch --parsable <paramref name="arguments"/>`, with <paramref name="environment"/> added to
    /// what it exports to the job, and waits for it to end (squeue no longer lists it) within <paramref name="timeout"/>,
    /// cancelling it if it does not. Returns its id and its JobState and ExitCode as `scontrol show job` gives them.
    /// </summary>
    internal async Task<(string JobId, string State, string ExitCode)> RunBatchJobAsync(IEnumerable<string> arguments, IReadOnlyDictionary<string, string?> environment, TimeSpan timeout)
    {
        var variables = WithConfiguration(environment);
        var (code, transcript) = await ChildProcess.RunAsync("/usr/bin/sbatch", ["--parsable", .. arguments], PmpiCli.Timeout, variables);
        Assert.True(code == 0, $"sbatch exited with {code}.\n{transcript}\n{Transcript}");
        string jobId = transcript.Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).Select(line => line.Split(';')[0]).First(line => line.All(char.IsAsciiDigit));
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var (listed, queue) = await ChildProcess.RunAsync("/usr/bin/squeue", ["-h", "-j", jobId, "-o", "%T"], PmpiCli.Timeout, variables);
            // squeue lists a job until it ends (and fails for one it has forgotten); then scontrol still shows it (MinJobAge).
            if (listed != 0 || !queue.Split('\n').Any(line => line.Trim() is { Length: > 0 } state && state.All(char.IsAsciiLetter))) break;
            if (DateTime.UtcNow > deadline)
            {
                await ChildProcess.RunAsync("/usr/bin/scancel", [jobId], PmpiCli.Timeout, variables);
                Assert.Fail($"Batch job {jobId} did not end within {timeout}: {queue}\n{Transcript}");
            }
            await Task.Delay(500);
        }
        var (shown, job) = await ChildProcess.RunAsync("/usr/bin/scontrol", ["show", "job", jobId], PmpiCli.Timeout, variables);
        Assert.True(shown == 0, $"scontrol show job {jobId} exited with {shown}.\n{job}");
        return (jobId, Field(job, "JobState"), Field(job, "ExitCode"));

        static string Field(string text, string name) =>
            text.Split([' ', '\n'], StringSplitOptions.RemoveEmptyEntries).FirstOrDefault(word => word.StartsWith(name + "=", StringComparison.Ordinal))?[(name.Length + 1)..] ?? "";
    }

    public async Task DisposeAsync()
    {
        // The node first: slurmd takes its job steps' slurmstepd processes and their tasks along.
        for (int i = _daemons.Count - 1; i >= 0; i--) await _daemons[i].DisposeAsync();
        _scratch.Dispose();
    }

    private void Start(string program, string[] arguments) => _daemons.Add(ChildProcess.Start(program, arguments));

    private async Task<bool> NodeIdleAsync()
    {
        await using var sinfo = ChildProcess.Start("/usr/bin/sinfo", ["-h", "-o", "%T"], new Dictionary<string, string?> { ["SLURM_CONF"] = Configuration });
        return await sinfo.WaitForExitAsync(PmpiCli.Timeout) == 0 && sinfo.Stdout.Contains("idle");
    }

    private async Task WaitForAsync(Func<Task<bool>> ready, string what)
    {
        var deadline = DateTime.UtcNow + PmpiCli.Timeout;
        while (!await ready())
        {
            if (_daemons.FirstOrDefault(d => d.HasExited) is { } ended) Assert.Fail($"A Slurm daemon (process {ended.Id}) ended while waiting for {what}.\n{Transcript}");
            if (DateTime.UtcNow > deadline) Assert.Fail($"No {what} within {PmpiCli.Timeout}.\n{Transcript}");
            await Task.Delay(250);
        }
    }
}

/// <summary>A fact that runs a Slurm cluster on this machine (<see cref="SlurmCluster"/>): Linux and root. Elsewhere it shows as skipped, saying why.</summary>
public sealed class SlurmFactAttribute : FactAttribute
{
    /// <summary>Whether this process may run slurmd.</summary>
    public static bool CanRun => OperatingSystem.IsLinux() && System.Environment.UserName == "root";

    public SlurmFactAttribute()
    {
        if (!CanRun) Skip = "Needs Linux and root: slurmd starts tasks as their user.";
    }
}
