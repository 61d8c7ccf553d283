namespace Pmpi.Cli;

/// <summary>
/// Finds the program `pmpi run` names as mpirun finds it: a path as given; a bare name in the current directory
/// (where a rank program built beside the job usually is), else on PATH, with PATHEXT's extensions on Windows.
/// </summary>
internal static class ProgramLookup
{
    /// <summary>The program's full path, or null when a bare <paramref name="name"/> is neither here nor on PATH.</summary>
    public static string? Find(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        var here = Path.GetFullPath(name);
        if (name.IndexOfAny([Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar]) >= 0 || File.Exists(here)) return here;
        string[] extensions = OperatingSystem.IsWindows() && !Path.HasExtension(name)
            ? (System.Environment.GetEnvironmentVariable("PATHEXT") ?? ".COM;.EXE;.BAT;.CMD").Split(';', StringSplitOptions.RemoveEmptyEntries)
            : [""];
        foreach (var directory in (System.Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
        {
            foreach (var extension in extensions)
            {
                var candidate = Path.Combine(directory, name + extension);
                if (IsExecutable(candidate)) return Path.GetFullPath(candidate);
            }
        }
        return null;
    }

    /// <summary>A file a shell would run: on Unix, one with an execute bit.</summary>
    private static bool IsExecutable(string path) =>
        File.Exists(path) && (OperatingSystem.IsWindows() || (File.GetUnixFileMode(path) & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0);
}
