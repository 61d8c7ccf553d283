using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Microsoft.Win32;

namespace Pmpi.Agent.NodeInfo.Internal;

/// <summary>
/// Memory from GlobalMemoryStatusEx, the CPU name from the registry (no WMI: it is slow, and absent on Nano Server).
/// Windows has no load average, so the load fields are null.
/// </summary>
[SupportedOSPlatform("windows")]
internal sealed partial class WindowsNodeInfoProvider : INodeInfoProvider
{
    private readonly Lazy<string?> _cpuModel = new(ReadCpuModel);

    public NodeMetadata GetMetadata()
    {
        long total = NodeFacts.GcTotalMemory();
        long? available = null;
        var status = new MemoryStatusEx { Length = (uint)Marshal.SizeOf<MemoryStatusEx>() };
        if (GlobalMemoryStatusEx(ref status))
        {
            total = (long)status.TotalPhys;
            available = (long)status.AvailPhys;
        }
        return NodeFacts.Create(_cpuModel.Value, null, total, available, RuntimeInformation.OSDescription);
    }

    private static string? ReadCpuModel()
    {
        using var key = Registry.LocalMachine.OpenSubKey(@"HARDWARE\DESCRIPTION\System\CentralProcessor\0");
        // Intel pads the name with spaces on some models.
        return (key?.GetValue("ProcessorNameString") as string)?.Trim() is { Length: > 0 } name ? name : null;
    }

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool GlobalMemoryStatusEx(ref MemoryStatusEx buffer);

    // MEMORYSTATUSEX (sysinfoapi.h); dwLength must be set before the call.
    [StructLayout(LayoutKind.Sequential)]
    private struct MemoryStatusEx
    {
        public uint Length;
        public uint MemoryLoad;
        public ulong TotalPhys;
        public ulong AvailPhys;
        public ulong TotalPageFile;
        public ulong AvailPageFile;
        public ulong TotalVirtual;
        public ulong AvailVirtual;
        public ulong AvailExtendedVirtual;
    }
}
