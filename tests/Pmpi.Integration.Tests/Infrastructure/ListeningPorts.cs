using System.Globalization;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>Where a process listens, as any local user can find it (Linux).</summary>
internal static class ListeningPorts
{
    /// <summary>The TCP ports a process listens on: its socket inodes (/proc/PID/fd) matched with LISTEN rows of /proc/PID/net/tcp.</summary>
    public static List<int> Of(int processId)
    {
        var inodes = new HashSet<string>();
        foreach (var fd in Directory.EnumerateFileSystemEntries($"/proc/{processId}/fd"))
        {
            if (new FileInfo(fd).LinkTarget is { } target && target.StartsWith("socket:[", StringComparison.Ordinal)) inodes.Add(target[8..^1]);
        }
        // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode": 0A is LISTEN.
        return [.. File.ReadLines($"/proc/{processId}/net/tcp").Skip(1)
            .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(columns => columns[3] == "0A" && inodes.Contains(columns[9]))
            .Select(columns => int.Parse(columns[1].Split(':')[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture))];
    }
}
