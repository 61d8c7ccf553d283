using Pmpi.Agent.Launching;

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
        return SearchPath.Find(name);
    }
}
