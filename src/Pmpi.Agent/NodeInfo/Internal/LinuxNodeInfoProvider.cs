using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace Pmpi.Agent.NodeInfo.Internal;

/// <summary>Reads /proc/cpuinfo, /proc/loadavg, /proc/meminfo and /etc/os-release.</summary>
/// <param name="procDirectory">Where /proc is; tests point it at a directory of sample files.</param>
/// <param name="osReleasePath">Where os-release is.</param>
[SupportedOSPlatform("linux")]
internal sealed class LinuxNodeInfoProvider(string procDirectory = "/proc", string osReleasePath = "/etc/os-release") : INodeInfoProvider
{
    // The CPU and distribution do not change while the agent runs; load and memory are read on every call.
    private readonly Lazy<string?> _cpuModel = new(() => ReadText(Path.Combine(procDirectory, "cpuinfo")) is { } text ? ProcParsers.ParseCpuModel(text) : null);
    private readonly Lazy<string> _osDescription = new(() =>
        (ReadText(osReleasePath) ?? ReadText("/usr/lib/os-release")) is { } text && ProcParsers.ParseOsReleaseName(text) is { } name
            ? name
            : RuntimeInformation.OSDescription);

    public NodeMetadata GetMetadata()
    {
        (double, double, double)? load = null;
        if (ReadText(Path.Combine(procDirectory, "loadavg")) is { } loadavg
            && ProcParsers.TryParseLoadAverage(loadavg, out double one, out double five, out double fifteen))
        {
            load = (one, five, fifteen);
        }

        long total = NodeFacts.GcTotalMemory();
        long? available = null;
        if (ReadText(Path.Combine(procDirectory, "meminfo")) is { } meminfo
            && ProcParsers.TryParseMemInfo(meminfo, out long memTotal, out long? memAvailable))
        {
            total = memTotal;
            available = memAvailable;
        }

        return NodeFacts.Create(_cpuModel.Value, load, total, available, _osDescription.Value);
    }

    // A missing or unreadable file (containers hide parts of /proc, hardened kernels restrict it) leaves that field
    // unknown rather than failing the whole report.
    private static string? ReadText(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
