using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace Pmpi.Agent.Launching.Internal;

/// <summary>
/// Keeps a rank and every process it starts together, so that killing the rank kills them all, even one that left
/// the rank's session (setsid) or was re-parented when its parent exited:
/// <list type="bullet">
/// <item>Linux with a writable cgroup v2 (root, or a subtree delegated to the agent's user): a cgroup of its own per rank, killed
/// through cgroup.kill. Nothing started inside a cgroup can leave it.</item>
/// <item>Linux, always: the rank's own session and process group (it is started through util-linux's setsid), killed
/// as a group along with the process tree; without a cgroup, a descendant that calls setsid and leaves the tree
/// (its parent exits) escapes.</item>
/// <item>Windows: a job object that kills its processes when killed or closed.</item>
/// </list>
/// The rank joins its cgroup or job object just after it starts: a process it starts in that first instant escapes.
/// </summary>
internal partial class RankContainment : IDisposable
{
    private const int SigKill = 9, SigCont = 18, SigStop = 19; // Linux

    /// <summary>util-linux's setsid, which runs a program in a new session (and process group) in place.</summary>
    private static readonly string? Setsid = OperatingSystem.IsWindows() ? null
        : new[] { "/usr/bin/setsid", "/bin/setsid" }.FirstOrDefault(File.Exists);

    private int _group;

    /// <summary>What kills a rank's processes on this machine; <paramref name="name"/> names its cgroup.</summary>
    public static RankContainment Create(string name)
    {
        if (OperatingSystem.IsWindows()) return new JobObjectContainment();
        if (OperatingSystem.IsLinux() && CgroupContainment.TryCreate(name) is { } cgroup) return cgroup;
        return new RankContainment();
    }

    /// <summary>The program to run in place of <paramref name="program"/>, and the arguments before the program's own.</summary>
    public (string FileName, IReadOnlyList<string> Prefix) Wrap(string program) =>
        Setsid is { } setsid ? (setsid, [program]) : (program, []);

    /// <summary>Takes the started rank in.</summary>
    /// <exception cref="IOException">The rank could not join its cgroup (it may have exited already).</exception>
    public void Adopt(Process process)
    {
        // setsid made the rank its own process group's leader: the group's id is the rank's.
        if (Setsid is not null) _group = process.Id;
        AdoptCore(process);
    }

    /// <summary>
    /// Kills the rank and everything it started; harmless when all are gone. The process tree goes first, while it
    /// is still whole (a process started before the rank joined its cgroup is found there), then the rank's process
    /// group, then the cgroup or job object. A rank that has exited has no tree left (its children were handed to
    /// another parent), and walking one reads every process's entry in /proc, so then only the others go.
    /// </summary>
    public void Kill(Process process)
    {
        try
        {
            if (!process.HasExited) process.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // Already exited.
        }
        if (_group > 0) _ = KillProcessGroup(-_group, SigKill);
        KillCore();
    }

    /// <summary>
    /// Stops the rank's process group where it is (SIGSTOP), or lets it go on (SIGCONT): the rank and what it started
    /// in its session. Nothing where there is no such group (Windows, which has no job control).
    /// </summary>
    public void Suspend(bool suspended)
    {
        if (_group > 0) _ = KillProcessGroup(-_group, suspended ? SigStop : SigCont);
    }

    public virtual void Dispose()
    {
    }

    protected virtual void AdoptCore(Process process)
    {
    }

    protected virtual void KillCore()
    {
    }

    [LibraryImport("libc", EntryPoint = "kill")]
    private static partial int KillProcessGroup(int processGroup, int signal);

    /// <summary>A cgroup v2 directory next to the agent's own, holding the rank and whatever it starts.</summary>
    private sealed class CgroupContainment(string directory) : RankContainment
    {
        private static int _sweptStale;

        public static CgroupContainment? TryCreate(string name)
        {
            try
            {
                if (Mount() is not { } mount) return null;
                // "0::/system.slice/pmpi-agent.service": the agent's own cgroup in the v2 hierarchy.
                var own = File.ReadLines("/proc/self/cgroup").FirstOrDefault(line => line.StartsWith("0::", StringComparison.Ordinal))?[3..];
                if (own is null) return null;
                var parent = mount + own;
                if (Interlocked.Exchange(ref _sweptStale, 1) == 0) SweepStale(parent);
                var directory = Path.Combine(parent, name);
                Directory.CreateDirectory(directory);
                return File.Exists(Path.Combine(directory, "cgroup.procs")) ? new CgroupContainment(directory) : null;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return null; // not root, or no delegation: the process group it is
            }
        }

        /// <summary>
        /// Removes the empty cgroups of agents that are gone (killed outright, they could not remove their own), once
        /// per process. Names are "pmpi-&lt;agent pid&gt;-...".
        /// </summary>
        private static void SweepStale(string parent)
        {
            foreach (var stale in Directory.EnumerateDirectories(parent, "pmpi-*"))
            {
                var parts = Path.GetFileName(stale).Split('-');
                if (parts.Length < 2 || !int.TryParse(parts[1], System.Globalization.CultureInfo.InvariantCulture, out int agent) || Directory.Exists($"/proc/{agent}")) continue;
                try
                {
                    Directory.Delete(stale); // fails, and stays, while a process is still inside
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                }
            }
        }

        protected override void AdoptCore(Process process) =>
            File.WriteAllText(Path.Combine(directory, "cgroup.procs"), process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));

        protected override void KillCore()
        {
            try
            {
                // cgroup.kill (Linux 5.14) kills every process of the cgroup at once, so none can fork away meanwhile.
                File.WriteAllText(Path.Combine(directory, "cgroup.kill"), "1");
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                foreach (var line in ReadProcesses())
                {
                    try
                    {
                        Process.GetProcessById(int.Parse(line, System.Globalization.CultureInfo.InvariantCulture)).Kill();
                    }
                    catch (Exception gone) when (gone is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception)
                    {
                    }
                }
            }
        }

        public override void Dispose()
        {
            // A cgroup can be removed once its processes are gone, which takes the kernel a moment after a kill.
            for (int attempt = 0; attempt < 50; attempt++)
            {
                try
                {
                    Directory.Delete(directory);
                    return;
                }
                catch (IOException) when (attempt < 49)
                {
                    Thread.Sleep(20);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    return; // left behind empty or nearly so; harmless
                }
            }
        }

        private string[] ReadProcesses()
        {
            try
            {
                return File.ReadAllLines(Path.Combine(directory, "cgroup.procs"));
            }
            catch (IOException)
            {
                return [];
            }
        }

        /// <summary>Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems).</summary>
        private static string? Mount()
        {
            // mountinfo: "id parent major:minor root mount-point options ... - fstype source super-options"
            foreach (var line in File.ReadLines("/proc/self/mountinfo"))
            {
                var halves = line.Split(" - ", 2);
                if (halves.Length == 2 && halves[1].StartsWith("cgroup2 ", StringComparison.Ordinal)) return halves[0].Split(' ')[4];
            }
            return null;
        }
    }

    /// <summary>A Windows job object that ends its processes when terminated or closed.</summary>
    [SupportedOSPlatform("windows")]
    private sealed partial class JobObjectContainment : RankContainment
    {
        private const int ExtendedLimitInformation = 9;   // JobObjectExtendedLimitInformation
        private const uint KillOnJobClose = 0x2000;        // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE

        private readonly nint _job;

        public JobObjectContainment()
        {
            _job = CreateJobObject(0, 0);
            if (_job == 0) return;
            var limits = new ExtendedLimits { BasicLimitFlags = KillOnJobClose };
            _ = SetInformationJobObject(_job, ExtendedLimitInformation, ref limits, (uint)Marshal.SizeOf<ExtendedLimits>());
        }

        protected override void AdoptCore(Process process)
        {
            if (_job != 0) _ = AssignProcessToJobObject(_job, process.Handle);
        }

        protected override void KillCore()
        {
            if (_job != 0) _ = TerminateJobObject(_job, 137);
        }

        public override void Dispose()
        {
            if (_job != 0) _ = CloseHandle(_job);
        }

        /// <summary>JOBOBJECT_EXTENDED_LIMIT_INFORMATION, of which only the limit flags are set.</summary>
        [StructLayout(LayoutKind.Sequential)]
        private struct ExtendedLimits
        {
            public long PerProcessUserTimeLimit;
            public long PerJobUserTimeLimit;
            public uint BasicLimitFlags;
            public nuint MinimumWorkingSetSize;
            public nuint MaximumWorkingSetSize;
            public uint ActiveProcessLimit;
            public nuint Affinity;
            public uint PriorityClass;
            public uint SchedulingClass;
            public ulong ReadOperationCount;
            public ulong WriteOperationCount;
            public ulong OtherOperationCount;
            public ulong ReadTransferCount;
            public ulong WriteTransferCount;
            public ulong OtherTransferCount;
            public nuint ProcessMemoryLimit;
            public nuint JobMemoryLimit;
            public nuint PeakProcessMemoryUsed;
            public nuint PeakJobMemoryUsed;
        }

        [LibraryImport("kernel32.dll", EntryPoint = "CreateJobObjectW")]
        private static partial nint CreateJobObject(nint attributes, nint name);

        [LibraryImport("kernel32.dll")]
        [return: MarshalAs(UnmanagedType.Bool)]
        private static partial bool SetInformationJobObject(nint job, int informationClass, ref ExtendedLimits information, uint length);

        [LibraryImport("kernel32.dll")]
        [return: MarshalAs(UnmanagedType.Bool)]
        private static partial bool AssignProcessToJobObject(nint job, nint process);

        [LibraryImport("kernel32.dll")]
        [return: MarshalAs(UnmanagedType.Bool)]
        private static partial bool TerminateJobObject(nint job, uint exitCode);

        [LibraryImport("kernel32.dll")]
        [return: MarshalAs(UnmanagedType.Bool)]
        private static partial bool CloseHandle(nint handle);
    }
}
