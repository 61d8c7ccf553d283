namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// The MPI launchers of Debian's packages, run as real processes: MPICH's Hydra (package mpich), which PMPI ranks
/// join through PMI. Named by its own path: MPICH and Open MPI both install an mpiexec and an mpirun, and the
/// alternatives system picks one of them for those names.
/// </summary>
internal static class MpiLaunchers
{
    /// <summary>MPICH's Hydra.</summary>
    public const string Hydra = "/usr/bin/mpiexec.hydra";

    /// <summary>Starts `mpiexec.hydra <paramref name="arguments"/>`.</summary>
    public static ChildProcess StartHydra(IEnumerable<string> arguments) => ChildProcess.Start(Required(Hydra, "mpich"), arguments);

    private static string Required(string path, string package)
    {
        if (!File.Exists(path)) Assert.Fail($"{path} is missing. Install it with: apt-get install -y {package}; CI installs the packages listed in .ci/apt-packages.");
        return path;
    }
}
