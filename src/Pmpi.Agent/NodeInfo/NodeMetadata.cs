using System.Runtime.InteropServices;

namespace Pmpi.Agent.NodeInfo;

/// <summary>A snapshot of a node's hardware, load and software, as its agent reports it.</summary>
/// <param name="NodeName">The host name.</param>
/// <param name="LogicalCores">
/// Logical processors this process may use (<see cref="Environment.ProcessorCount"/>): it honours CPU affinity and
/// container CPU limits, which is what ranks launched by the agent get too.
/// </param>
/// <param name="CpuModel">The CPU model as the OS names it, e.g. "AMD EPYC 7B13"; null when the OS does not say.</param>
/// <param name="LoadAverage1">
/// Run-queue load average over 1 minute (Linux /proc/loadavg). Null on Windows, which has no load average; a
/// sampled CPU-usage figure would not mean the same thing, so none is substituted.
/// </param>
/// <param name="LoadAverage5">Load average over 5 minutes; null where <paramref name="LoadAverage1"/> is.</param>
/// <param name="LoadAverage15">Load average over 15 minutes; null where <paramref name="LoadAverage1"/> is.</param>
/// <param name="MemoryTotalBytes">Physical memory in bytes.</param>
/// <param name="MemoryAvailableBytes">
/// Memory available to new processes without swapping (Linux MemAvailable, Windows ullAvailPhys); null when unknown.
/// </param>
/// <param name="OsDescription">The OS, e.g. "Debian GNU/Linux 13 (trixie)" or "Microsoft Windows 10.0.22631".</param>
/// <param name="OsVersion">The OS version: the kernel version on Linux, the build version on Windows.</param>
/// <param name="Architecture">The OS's processor architecture.</param>
/// <param name="RuntimeDescription">The .NET runtime the agent runs on, e.g. ".NET 10.0.0".</param>
public sealed record NodeMetadata(
    string NodeName,
    int LogicalCores,
    string? CpuModel,
    double? LoadAverage1,
    double? LoadAverage5,
    double? LoadAverage15,
    long MemoryTotalBytes,
    long? MemoryAvailableBytes,
    string OsDescription,
    string OsVersion,
    Architecture Architecture,
    string RuntimeDescription);
