using System.Runtime.InteropServices;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// Copying bytes straight out of another process's memory, as Open MPI's shared-memory transport does for large
/// messages (CMA): Linux's process_vm_readv, one copy and no ring between, allowed where the kernel lets this
/// process trace the other (same user; Yama's ptrace_scope 0). Elsewhere, or where the kernel refuses, a pair keeps
/// its ring.
/// </summary>
internal static unsafe partial class PeerMemory
{
    /// <summary>Whether this platform has such a copy at all.</summary>
    public static bool IsSupported => OperatingSystem.IsLinux();

    /// <summary>Fills <paramref name="destination"/> from <paramref name="address"/> in process <paramref name="pid"/>.</summary>
    /// <exception cref="IOException">The kernel refused or the process no longer holds those bytes; the message says why.</exception>
    public static void Read(int pid, long address, Span<byte> destination)
    {
        fixed (byte* start = destination)
        {
            for (long done = 0; done < destination.Length;)
            {
                var local = new IoVector { Base = start + done, Length = (nuint)(destination.Length - done) };
                var remote = new IoVector { Base = (byte*)(address + done), Length = local.Length };
                long read = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                if (read <= 0)
                {
                    int errno = read < 0 ? Marshal.GetLastPInvokeError() : 0;
                    throw new IOException($"cannot copy {destination.Length - done} bytes out of process {pid} (process_vm_readv: {(errno == 0 ? "nothing read" : Marshal.GetPInvokeErrorMessage(errno))})");
                }
                done += read;
            }
        }
    }

    [LibraryImport("libc", SetLastError = true)]
    private static partial long process_vm_readv(int pid, IoVector* local, ulong localCount, IoVector* remote, ulong remoteCount, ulong flags);

    [StructLayout(LayoutKind.Sequential)]
    private struct IoVector
    {
        public byte* Base;
        public nuint Length;
    }
}
