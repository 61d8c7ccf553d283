using System.Globalization;

namespace Pmpi.Agent.NodeInfo.Internal;

/// <summary>
/// Parsers for the Linux /proc and /etc files the Linux provider reads. Pure functions over text, so odd formats from
/// other architectures and old kernels are unit-tested without those machines.
/// </summary>
internal static class ProcParsers
{
    // cpuinfo keys that name the CPU, best first. Case matters: x86's "processor" is an index, old ARM's "Processor" a
    // name. "cpu model" is MIPS, "cpu" PowerPC ("POWER9 (raw), altivec supported"), "uarch" RISC-V.
    private static readonly string[] ModelKeys = ["model name", "cpu model", "Processor", "cpu", "uarch"];

    /// <summary>
    /// The CPU model from /proc/cpuinfo text. ARM64 kernels print no name, only implementer and part numbers, which are
    /// mapped through a small table (distinct cores joined, for big.LITTLE); the SoC "Hardware" line is the last resort.
    /// </summary>
    public static string? ParseCpuModel(string cpuinfo)
    {
        var first = new Dictionary<string, string>(StringComparer.Ordinal);
        var armCores = new List<string>();
        string? implementer = null;
        foreach (var (key, value) in Fields(cpuinfo, ':'))
        {
            if (value.Length > 0) first.TryAdd(key, value);
            if (key == "CPU implementer") implementer = value;
            else if (key == "CPU part" && implementer is not null)
            {
                string core = ArmCoreName(implementer, value);
                if (!armCores.Contains(core)) armCores.Add(core);
            }
        }

        foreach (var key in ModelKeys)
        {
            if (first.TryGetValue(key, out var model)) return model;
        }
        if (armCores.Count > 0) return string.Join(" + ", armCores);
        return first.GetValueOrDefault("Hardware");
    }

    /// <summary>Parses "/proc/loadavg": "0.52 0.58 0.59 1/389 12345".</summary>
    public static bool TryParseLoadAverage(string loadavg, out double one, out double five, out double fifteen)
    {
        one = five = fifteen = 0;
        var parts = loadavg.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        return parts.Length >= 3
            && double.TryParse(parts[0], NumberStyles.Float, CultureInfo.InvariantCulture, out one)
            && double.TryParse(parts[1], NumberStyles.Float, CultureInfo.InvariantCulture, out five)
            && double.TryParse(parts[2], NumberStyles.Float, CultureInfo.InvariantCulture, out fifteen);
    }

    /// <summary>
    /// Parses "/proc/meminfo" ("MemTotal:       16314664 kB"). Available memory is MemAvailable, or on kernels before
    /// 3.14, which lack it, the usual estimate MemFree + Buffers + Cached.
    /// </summary>
    public static bool TryParseMemInfo(string meminfo, out long totalBytes, out long? availableBytes)
    {
        var values = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (key, value) in Fields(meminfo, ':'))
        {
            if (TryParseSize(value, out long bytes)) values.TryAdd(key, bytes);
        }

        availableBytes = null;
        if (!values.TryGetValue("MemTotal", out totalBytes) || totalBytes <= 0) return false;
        if (values.TryGetValue("MemAvailable", out long available))
        {
            availableBytes = available;
        }
        else if (values.TryGetValue("MemFree", out long free))
        {
            availableBytes = free + values.GetValueOrDefault("Buffers") + values.GetValueOrDefault("Cached");
        }
        return true;
    }

    /// <summary>The distribution's name from /etc/os-release: PRETTY_NAME, else NAME and VERSION.</summary>
    public static string? ParseOsReleaseName(string osRelease)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var (key, value) in Fields(osRelease, '='))
        {
            values[key] = Unquote(value);
        }
        if (values.TryGetValue("PRETTY_NAME", out var pretty) && pretty.Length > 0) return pretty;
        if (values.TryGetValue("NAME", out var name) && name.Length > 0)
        {
            return values.TryGetValue("VERSION", out var version) && version.Length > 0 ? $"{name} {version}" : name;
        }
        return null;
    }

    private static IEnumerable<(string Key, string Value)> Fields(string text, char separator)
    {
        foreach (var line in text.Split('\n'))
        {
            int at = line.IndexOf(separator, StringComparison.Ordinal);
            if (at <= 0) continue;
            string key = line[..at].Trim();
            if (key.Length == 0 || key.StartsWith('#')) continue;
            yield return (key, line[(at + 1)..].Trim());
        }
    }

    // "16314664 kB" (the kernel's kB is KiB) or a bare number, as HugePages_Total prints.
    private static bool TryParseSize(string value, out long bytes)
    {
        bytes = 0;
        var parts = value.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length == 0 || !long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long number)) return false;
        long unit = parts.Length > 1 ? parts[1].ToUpperInvariant() switch
        {
            "KB" => 1024L,
            "MB" => 1024L * 1024,
            "GB" => 1024L * 1024 * 1024,
            _ => 0,
        } : 1;
        if (unit == 0 || number > long.MaxValue / unit) return false;
        bytes = number * unit;
        return true;
    }

    // os-release values follow shell quoting: "..." or '...', backslash escapes inside double quotes.
    private static string Unquote(string value)
    {
        if (value.Length >= 2 && value[0] == '\'' && value[^1] == '\'') return value[1..^1];
        if (value.Length >= 2 && value[0] == '"' && value[^1] == '"')
        {
            var inner = value[1..^1];
            var builder = new System.Text.StringBuilder(inner.Length);
            for (int i = 0; i < inner.Length; i++)
            {
                if (inner[i] == '\\' && i + 1 < inner.Length) i++;
                builder.Append(inner[i]);
            }
            return builder.ToString();
        }
        return value;
    }

    // ARM's MIDR implementer and part numbers (Arm "Main ID Register" docs; the table util-linux's lscpu keeps), for the
    // cores a cluster node is likely to have. Unknown ones still print their numbers.
    private static string ArmCoreName(string implementer, string part)
    {
        string vendor = Normalize(implementer) switch
        {
            "0x41" => "ARM",
            "0x42" => "Broadcom",
            "0x43" => "Cavium",
            "0x46" => "Fujitsu",
            "0x48" => "HiSilicon",
            "0x4e" => "NVIDIA",
            "0x50" => "APM",
            "0x51" => "Qualcomm",
            "0x53" => "Samsung",
            "0x61" => "Apple",
            "0xc0" => "Ampere",
            var other => $"implementer {other}",
        };
        string? core = Normalize(implementer) == "0x41" ? Normalize(part) switch
        {
            "0xd03" => "Cortex-A53",
            "0xd04" => "Cortex-A35",
            "0xd05" => "Cortex-A55",
            "0xd07" => "Cortex-A57",
            "0xd08" => "Cortex-A72",
            "0xd09" => "Cortex-A73",
            "0xd0a" => "Cortex-A75",
            "0xd0b" => "Cortex-A76",
            "0xd0c" => "Neoverse-N1",
            "0xd0d" => "Cortex-A77",
            "0xd40" => "Neoverse-V1",
            "0xd41" => "Cortex-A78",
            "0xd44" => "Cortex-X1",
            "0xd46" => "Cortex-A510",
            "0xd47" => "Cortex-A710",
            "0xd48" => "Cortex-X2",
            "0xd49" => "Neoverse-N2",
            "0xd4f" => "Neoverse-V2",
            _ => null,
        } : null;
        return core is null ? $"{vendor} part {Normalize(part)}" : $"{vendor} {core}";

        static string Normalize(string hex) => hex.Trim().ToLowerInvariant();
    }
}
