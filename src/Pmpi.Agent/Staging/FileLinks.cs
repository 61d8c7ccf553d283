using System.Runtime.InteropServices;

namespace Pmpi.Agent.Staging;

/// <summary>
/// Hard links, which .NET has no call for: a second name for a file's bytes in the same file system, so that a staged
/// program's directory takes no room beside the store it is made from.
/// </summary>
internal static partial class FileLinks
{
    /// <summary>Gives <paramref name="existing"/> the second name <paramref name="link"/>; false where the file system has no hard links (then nothing is made).</summary>
    public static bool TryCreateHardLink(string existing, string link) =>
        OperatingSystem.IsWindows() ? CreateHardLink(link, existing, 0) : Link(existing, link) == 0;

    [LibraryImport("libc", EntryPoint = "link", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Link(string existing, string link);

    [LibraryImport("kernel32.dll", EntryPoint = "CreateHardLinkW", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool CreateHardLink(string link, string existing, nint securityAttributes);
}
