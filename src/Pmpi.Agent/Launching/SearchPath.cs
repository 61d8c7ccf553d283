namespace Pmpi.Agent.Launching;

/// <summary>
/// Finds a program by bare name on PATH, as a shell would: with PATHEXT's extensions on Windows, an execute bit on
/// Unix. The agent finds the dotnet host so; `pmpi run` finds the programs it is given so.
/// </summary>
public static class SearchPath
{
    /// <summary>The full path of <paramref name="name"/> in the first PATH directory that has it, or null.</summary>
    public static string? Find(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
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
