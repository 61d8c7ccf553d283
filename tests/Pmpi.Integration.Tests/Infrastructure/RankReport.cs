using System.Globalization;
using System.Text.RegularExpressions;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>A rank's "hello" line as `pmpi run` shows it: "[R] hello rank=R size=N pid=P job=J agent=A".</summary>
internal sealed partial record RankHello(int Tag, int Rank, int Size, int ProcessId, string JobId, string Agent)
{
    /// <summary>Every hello line in <paramref name="lines"/>.</summary>
    public static List<RankHello> All(IEnumerable<string> lines) =>
        [.. lines.Select(line => Pattern().Match(line)).Where(m => m.Success).Select(m => new RankHello(
            Int(m.Groups["tag"]), Int(m.Groups["rank"]), Int(m.Groups["size"]), Int(m.Groups["pid"]), m.Groups["job"].Value, m.Groups["agent"].Value))];

    /// <summary>Whether <paramref name="line"/> is a hello line.</summary>
    public static bool Is(string line) => Pattern().IsMatch(line);

    private static int Int(System.Text.RegularExpressions.Group group) => int.Parse(group.Value, CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\[(?<tag>\d+)\] hello rank=(?<rank>\d+) size=(?<size>\d+) pid=(?<pid>\d+) job=(?<job>\S*) agent=(?<agent>\S*)$")]
    private static partial Regex Pattern();
}

/// <summary>Finds and ends the rank processes of a job, so a test proves none outlived it and never leaks one.</summary>
internal static class RankProcesses
{
    /// <summary>
    /// The live processes among <paramref name="processIds"/> and, on Linux, any other process whose environment
    /// carries PMPI_JOB_ID=<paramref name="jobId"/>. A zombie (dead, not yet reaped) does not count.
    /// </summary>
    public static List<int> Survivors(string jobId, IEnumerable<int> processIds)
    {
        var candidates = new HashSet<int>(processIds);
        if (OperatingSystem.IsLinux())
        {
            foreach (var directory in Directory.EnumerateDirectories("/proc"))
                if (int.TryParse(Path.GetFileName(directory), out int pid) && EnvironmentOf(pid).Contains($"\0PMPI_JOB_ID={jobId}\0", StringComparison.Ordinal)) candidates.Add(pid);
        }
        return [.. candidates.Where(pid => IsRank(pid, jobId)).Order()];
    }

    /// <summary>Waits up to <paramref name="grace"/> for the job's processes to be gone; returns those that are not.</summary>
    public static async Task<List<int>> SurvivorsAfterAsync(string jobId, IEnumerable<int> processIds, TimeSpan grace)
    {
        var deadline = DateTime.UtcNow + grace;
        while (true)
        {
            var survivors = Survivors(jobId, processIds);
            if (survivors.Count == 0 || DateTime.UtcNow >= deadline) return survivors;
            await Task.Delay(100).ConfigureAwait(false);
        }
    }

    /// <summary>Kills the job's remaining rank processes by id (cleanup: a failing test must not leak them).</summary>
    public static void Kill(string jobId, IEnumerable<int> processIds)
    {
        foreach (var pid in Survivors(jobId, processIds))
        {
            try
            {
                using var process = System.Diagnostics.Process.GetProcessById(pid);
                process.Kill(entireProcessTree: true);
            }
            catch (Exception e) when (e is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception)
            {
                // Gone meanwhile.
            }
        }
    }

    // A printed pid might be reused by an unrelated process after the rank ended: on Linux its environment tells.
    private static bool IsRank(int pid, string jobId)
    {
        if (OperatingSystem.IsLinux())
        {
            if (IsZombie(pid)) return false;
            return EnvironmentOf(pid).Contains($"\0PMPI_JOB_ID={jobId}\0", StringComparison.Ordinal);
        }
        try
        {
            using var process = System.Diagnostics.Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static string EnvironmentOf(int pid)
    {
        try
        {
            return "\0" + File.ReadAllText($"/proc/{pid}/environ") + "\0";
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return "";
        }
    }

    private static bool IsZombie(int pid) => StateOf(pid) is 'Z' or null;

    /// <summary>A Linux process's state as /proc/PID/stat gives it (R, S, T stopped, Z zombie, ...), or null when it is gone.</summary>
    public static char? StateOf(int pid)
    {
        try
        {
            // "pid (comm) state ...": comm may hold spaces and parentheses, so read after the last ')'.
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat.AsSpan(stat.LastIndexOf(')') + 1).TrimStart()[0];
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
