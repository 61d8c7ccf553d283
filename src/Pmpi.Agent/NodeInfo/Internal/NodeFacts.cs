using System.Runtime.InteropServices;

namespace Pmpi.Agent.NodeInfo.Internal;

/// <summary>The facts every provider takes from .NET itself rather than from the OS.</summary>
internal static class NodeFacts
{
    /// <summary>
    /// The DNS host name. Not <see cref="Environment.MachineName"/>, which on Windows is the NetBIOS name (upper case,
    /// cut to 15 characters) and so may not match what other nodes resolve.
    /// </summary>
    public static string HostName()
    {
        try
        {
            return System.Net.Dns.GetHostName();
        }
        catch (System.Net.Sockets.SocketException)
        {
            return Environment.MachineName;
        }
    }

    /// <summary>Builds the metadata, filling in the .NET-side facts.</summary>
    public static NodeMetadata Create(
        string? cpuModel,
        (double One, double Five, double Fifteen)? load,
        long memoryTotalBytes,
        long? memoryAvailableBytes,
        string osDescription) =>
        new(
            HostName(),
            Environment.ProcessorCount,
            cpuModel,
            load?.One,
            load?.Five,
            load?.Fifteen,
            memoryTotalBytes,
            memoryAvailableBytes,
            osDescription,
            Environment.OSVersion.Version.ToString(),
            RuntimeInformation.OSArchitecture,
            RuntimeInformation.FrameworkDescription);

    /// <summary>
    /// Memory the GC believes the machine (or the container's limit) has; a fallback when the OS cannot be asked.
    /// </summary>
    public static long GcTotalMemory() => GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
}
