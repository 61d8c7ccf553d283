namespace Pmpi.Agent.Computation.Internal;

/// <summary>
/// A full path of the other family of systems than the one reading the computation file: a drive or UNC path
/// (C:\ranks\app.exe, \\server\share\app.exe) read on Linux, a /-rooted path read on Windows. It names a program on a
/// node of that other system, so it is passed to that node's agent as written instead of being resolved and checked
/// here, where it means nothing.
/// </summary>
internal static class ForeignPath
{
    /// <summary>The other family, for messages: "Windows" read on Unix, "Unix" read on Windows.</summary>
    public static string System => OperatingSystem.IsWindows() ? "Unix" : "Windows";

    public static bool Is(string path) => OperatingSystem.IsWindows()
        ? path.StartsWith('/') && !path.StartsWith("//", StringComparison.Ordinal)
        : path.StartsWith(@"\\", StringComparison.Ordinal) || (path.Length >= 3 && char.IsAsciiLetter(path[0]) && path[1] == ':' && path[2] is '\\' or '/');

    /// <summary><paramref name="path"/> as written when it is foreign, else resolved against <paramref name="baseDirectory"/>.</summary>
    public static string Resolve(string path, string baseDirectory) => Is(path) ? path : Path.GetFullPath(path, baseDirectory);
}
