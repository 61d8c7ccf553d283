namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// The MPI launchers of Debian's packages, run as real processes: MPICH's Hydra (package mpich), which PMPI ranks
/// join through PMI, and Open MPI's mpirun (package openmpi-bin), which they refuse. Named by their own paths: both
/// packages install an mpiexec and an mpirun, and the alternatives system picks one of them for those names.
/// </summary>
internal static class MpiLaunchers
{
    /// <summary>MPICH's Hydra.</summary>
    public const string Hydra = "/usr/bin/mpiexec.hydra";

    /// <summary>Open MPI's mpirun.</summary>
    public const string OpenMpi = "/usr/bin/mpirun.openmpi";

    /// <summary>Starts `mpiexec.hydra <paramref name="arguments"/>`.</summary>
    public static ChildProcess StartHydra(IEnumerable<string> arguments) => ChildProcess.Start(Required(Hydra, "mpich"), arguments);

    /// <summary>Starts Open MPI's `mpirun <paramref name="arguments"/>`, allowed to run as root (as the tests may).</summary>
    public static ChildProcess StartOpenMpi(IEnumerable<string> arguments) =>
        ChildProcess.Start(Required(OpenMpi, "openmpi-bin"), ["--allow-run-as-root", "--oversubscribe", .. arguments], new Dictionary<string, string?>
        {
            ["OMPI_ALLOW_RUN_AS_ROOT"] = "1",
            ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1",
        });

    private static string Required(string path, string package)
    {
        if (!File.Exists(path)) Assert.Fail($"{path} is missing. Install it with: apt-get install -y {package}; CI installs the packages listed in .ci/apt-packages.");
        return path;
    }
}
