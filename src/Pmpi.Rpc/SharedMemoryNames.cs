using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Pmpi.Rpc;

/// <summary>
/// The names of a job's shared-memory segments, one per pair of ranks on a node: the contract between the ranks that
/// make them and the agent that removes what its ranks left. A name is "pmpi-", 32 hex digits of HMAC-SHA256 under
/// the job key (unguessable without it), then the pair's two job ranks. On Linux a segment is a file in
/// <see cref="Directory"/> that the pair removes once both have mapped it; a rank killed before its peer came leaves
/// the name, and its agent removes it when the launch ends (<see cref="RemoveLeftovers"/>). On Windows a segment is
/// a named mapping, which ends with its last handle.
/// </summary>
public static class SharedMemoryNames
{
    /// <summary>Where the segments' files are on Linux and other Unixes: tmpfs when there is one.</summary>
    public static string Directory { get; } = System.IO.Directory.Exists("/dev/shm") ? "/dev/shm" : Path.GetTempPath();

    /// <summary>The segment of job ranks <paramref name="lower"/> and <paramref name="higher"/> of the job whose key is <paramref name="jobKey"/>.</summary>
    public static string Of(string jobKey, int lower, int higher) =>
        string.Create(CultureInfo.InvariantCulture, $"{JobPrefix(jobKey)}{lower}-{higher}");

    /// <summary>
    /// Removes the names of the job's segments that one of <paramref name="ranks"/> made and its peer never mapped,
    /// once those ranks have ended (a mapped segment has lost its name already). Returns how many it removed.
    /// </summary>
    public static int RemoveLeftovers(string jobKey, IEnumerable<int> ranks)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        if (OperatingSystem.IsWindows()) return 0;
        var ended = ranks.ToHashSet();
        string prefix = JobPrefix(jobKey);
        int removed = 0;
        foreach (var path in System.IO.Directory.EnumerateFiles(Directory, prefix + "*"))
        {
            var pair = Path.GetFileName(path.AsSpan())[prefix.Length..];
            int dash = pair.IndexOf('-');
            if (dash < 0 || !int.TryParse(pair[..dash], CultureInfo.InvariantCulture, out int lower) || !int.TryParse(pair[(dash + 1)..], CultureInfo.InvariantCulture, out int higher)) continue;
            if (!ended.Contains(lower) && !ended.Contains(higher)) continue;
            try
            {
                File.Delete(path);
                removed++;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Gone meanwhile, or not this user's to remove.
            }
        }
        return removed;
    }

    private static string JobPrefix(string jobKey)
    {
        ArgumentNullException.ThrowIfNull(jobKey);
        var tag = HMACSHA256.HashData(Encoding.UTF8.GetBytes(jobKey), "shared memory"u8);
        // Spelled out, not Convert.ToHexStringLower: its vectorized code is compiled at run time, and every rank of a
        // node calls this as it starts.
        return string.Create(5 + 32 + 1, tag, static (name, tag) =>
        {
            "pmpi-".CopyTo(name);
            for (int i = 0; i < 16; i++)
            {
                name[5 + 2 * i] = "0123456789abcdef"[tag[i] >> 4];
                name[6 + 2 * i] = "0123456789abcdef"[tag[i] & 0xF];
            }
            name[^1] = '-';
        });
    }
}
