namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A fact that needs a writable cgroup v2 hierarchy (root, or a delegated cgroup) and shows as skipped without one,
/// saying why: there the agent contains ranks by process group only, and a descendant that calls setsid escapes
/// (docs/architecture.md, "Agent hosting").
/// </summary>
public sealed class CgroupFactAttribute : FactAttribute
{
    public CgroupFactAttribute()
    {
        if (!OperatingSystem.IsLinux() || !CanCreateCgroup()) Skip = "Needs a writable cgroup v2 hierarchy (root or a delegated cgroup).";
    }

    private static bool CanCreateCgroup()
    {
        try
        {
            var mount = File.ReadLines("/proc/self/mountinfo").Select(line => line.Split(" - ", 2))
                .Where(halves => halves.Length == 2 && halves[1].StartsWith("cgroup2 ", StringComparison.Ordinal))
                .Select(halves => halves[0].Split(' ')[4]).FirstOrDefault();
            var own = File.ReadLines("/proc/self/cgroup").FirstOrDefault(line => line.StartsWith("0::", StringComparison.Ordinal))?[3..];
            if (mount is null || own is null) return false;
            var probe = Path.Combine(mount + own, $"pmpi-test-probe-{Guid.NewGuid():N}");
            Directory.CreateDirectory(probe);
            Directory.Delete(probe);
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }
}
