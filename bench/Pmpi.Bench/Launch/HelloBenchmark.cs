using System.Globalization;

namespace Pmpi.Bench.Launch;

/// <summary>
/// The smallest rank program, as bench/native/hello.c: initialise, wait in a barrier, report the resident memory at
/// that point (<c>rank\tsize\trss_kb</c>), finish. run.sh times whole launches of it beside <c>mpirun</c>'s.
/// </summary>
public static class HelloBenchmark
{
    /// <summary>The rank body: one line from every rank.</summary>
    public static void Run(Intracommunicator world, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        world.Barrier();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{world.Rank}\t{world.Size}\t{ResidentKib()}"));
        output.Flush();
    }

    /// <summary>VmRSS of this process in KiB from /proc/self/status; the working set where there is no /proc.</summary>
    private static long ResidentKib()
    {
        const string status = "/proc/self/status";
        if (File.Exists(status))
        {
            foreach (var line in File.ReadLines(status))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                    return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture);
            }
        }
        return System.Diagnostics.Process.GetCurrentProcess().WorkingSet64 / 1024;
    }
}
