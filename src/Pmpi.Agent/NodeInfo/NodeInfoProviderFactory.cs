using Pmpi.Agent.NodeInfo.Internal;

namespace Pmpi.Agent.NodeInfo;

/// <summary>Chooses the <see cref="INodeInfoProvider"/> for the operating system the agent runs on.</summary>
public static class NodeInfoProviderFactory
{
    /// <summary>
    /// Returns the Linux provider (/proc) on Linux, the Windows provider (Win32 and registry) on Windows, and on other
    /// systems a portable one that reports what .NET alone knows (no CPU model, no load, no available memory).
    /// </summary>
    public static INodeInfoProvider Create()
    {
        if (OperatingSystem.IsLinux()) return new LinuxNodeInfoProvider();
        if (OperatingSystem.IsWindows()) return new WindowsNodeInfoProvider();
        return new PortableNodeInfoProvider();
    }
}
