using System.Runtime.InteropServices;

namespace Pmpi.Rpc.Security.Internal;

/// <summary>
/// A file's mode and owner as the kernel states them (following symbolic links), and this process's effective uid:
/// what the credential loader needs to tell whether another user could have written what it is about to trust.
/// .NET exposes a file's mode but not its owner, so on Linux both come from statx(2), whose layout is the same on
/// every architecture; elsewhere on Unix the owner is unknown.
/// </summary>
internal static partial class UnixFileStatus
{
    private const int CurrentDirectory = -100; // AT_FDCWD
    private const uint ModeAndOwner = 0x2 | 0x8; // STATX_MODE | STATX_UID
    private const int StatxSize = 256;
    private const int UidOffset = 20;  // struct statx: u32 stx_mask, u32 stx_blksize, u64 stx_attributes, u32 stx_nlink, u32 stx_uid
    private const int ModeOffset = 28; // ... u32 stx_gid, u16 stx_mode

    /// <summary>The effective uid of this process.</summary>
    public static uint ProcessUser => GetEffectiveUserId();

    /// <summary>The permission bits of <paramref name="path"/> and, on Linux, its owner's uid (null elsewhere).</summary>
    /// <exception cref="IOException">The file cannot be examined.</exception>
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public static unsafe (UnixFileMode Mode, uint? Owner) Of(string path)
    {
        if (!OperatingSystem.IsLinux()) return (File.GetUnixFileMode(path), null);
        byte* status = stackalloc byte[StatxSize];
        if (Statx(CurrentDirectory, path, 0, ModeAndOwner, status) != 0)
            throw new IOException($"Cannot examine {path}: {Marshal.GetLastPInvokeErrorMessage()}.");
        const int PermissionBits = 0xFFF; // rwx for owner, group and others, plus setuid, setgid and sticky
        return ((UnixFileMode)(*(ushort*)(status + ModeOffset) & PermissionBits), *(uint*)(status + UidOffset));
    }

    [LibraryImport("libc", EntryPoint = "geteuid")]
    private static partial uint GetEffectiveUserId();

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int Statx(int directory, string path, int flags, uint mask, byte* status);
}
