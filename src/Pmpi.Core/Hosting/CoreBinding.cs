using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Pmpi.Hosting;

/// <summary>
/// Binds a rank to one core of its node, as mpirun does by default when a node has a core for each of its ranks.
/// Left free, two ranks that message each other are kept on one core by the kernel's scheduler (it wakes a task
/// where its waker runs), so a transfer's two copies take turns on that core while the other idles: measured with
/// `perf sched`, two ranks of a 1 MB ping-pong over loopback ran 85% of their time on the same one of two cores.
/// </summary>
internal static partial class CoreBinding
{
    private const int MaskBytes = 128; // 1024 processors

    /// <summary>
    /// Binds every thread of this process to one of the processors it may use, when they are at least
    /// <paramref name="ranksOnNode"/> (two or more): the ranks of a job on a node take consecutive processors from
    /// one that <paramref name="jobId"/> picks, so that two jobs on a large node seldom share them. Which processors a
    /// rank may use (taskset, a cgroup's cpuset, a Slurm allocation) is honoured. Returns the processor, or null when
    /// the rank stays unbound.
    /// </summary>
    public static int? Bind(string jobId, int localIndex, int ranksOnNode)
    {
        if (ranksOnNode < 2) return null;
        // The same on every rank of the job (string.GetHashCode differs from process to process). Loops here and below,
        // not LINQ over chars and ints, whose code a ReadyToRun rank would compile as it starts.
        uint hash = 17;
        foreach (char c in jobId) hash = hash * 31 + c;
        int first = (int)(hash % 1024);
        try
        {
            if (OperatingSystem.IsLinux()) return BindLinux(first + localIndex, ranksOnNode);
            if (OperatingSystem.IsWindows()) return BindWindows(first + localIndex, ranksOnNode);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.ComponentModel.Win32Exception)
        {
            // A processor set that changed under the rank, a thread that ended: the rank runs unbound.
        }
        return null;
    }

    private static unsafe int? BindLinux(int position, int ranksOnNode)
    {
        var mask = stackalloc byte[MaskBytes];
        if (sched_getaffinity(0, MaskBytes, mask) != 0) return null;
        var allowed = new List<int>();
        for (int cpu = 0; cpu < MaskBytes * 8; cpu++)
        {
            if ((mask[cpu / 8] & (1 << (cpu % 8))) != 0) allowed.Add(cpu);
        }
        if (allowed.Count < ranksOnNode) return null;
        int chosen = allowed[position % allowed.Count];
        new Span<byte>(mask, MaskBytes).Clear();
        mask[chosen / 8] = (byte)(1 << (chosen % 8));
        // Threads made later take their creator's binding; every thread that exists now is bound here.
        foreach (var task in Directory.EnumerateDirectories("/proc/self/task"))
            if (int.TryParse(Path.GetFileName(task), out int thread)) sched_setaffinity(thread, MaskBytes, mask);
        return chosen;
    }

    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private static int? BindWindows(int position, int ranksOnNode)
    {
        using var process = Process.GetCurrentProcess();
        long mask = process.ProcessorAffinity;
        var allowed = Enumerable.Range(0, 64).Where(cpu => (mask & (1L << cpu)) != 0).ToList();
        if (allowed.Count < ranksOnNode) return null;
        int chosen = allowed[position % allowed.Count];
        process.ProcessorAffinity = (nint)(1L << chosen);
        return chosen;
    }

    [LibraryImport("libc", SetLastError = true)]
    private static unsafe partial int sched_getaffinity(int pid, nuint size, byte* mask);

    [LibraryImport("libc", SetLastError = true)]
    private static unsafe partial int sched_setaffinity(int pid, nuint size, byte* mask);
}
