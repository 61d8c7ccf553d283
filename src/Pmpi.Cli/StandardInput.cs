using System.Runtime.InteropServices;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi run`'s own standard input, which rank 0 reads, as mpirun passes its input on (the other ranks' input is
/// empty). A terminal is passed on only while `pmpi run` runs in its foreground: read from the background, the
/// terminal would stop the whole process (SIGTTIN), its embedded agent with it.
/// </summary>
internal static partial class StandardInput
{
    /// <summary>The input for rank 0, or null when it is a terminal this process may not read.</summary>
    public static Stream? ForRankZero()
    {
        bool readable = Console.IsInputRedirected || OperatingSystem.IsWindows() || ForegroundProcessGroup(0) == ProcessGroup();
        return readable ? Console.OpenStandardInput() : null;
    }

    [LibraryImport("libc", EntryPoint = "tcgetpgrp")]
    private static partial int ForegroundProcessGroup(int fileDescriptor);

    [LibraryImport("libc", EntryPoint = "getpgrp")]
    private static partial int ProcessGroup();
}
