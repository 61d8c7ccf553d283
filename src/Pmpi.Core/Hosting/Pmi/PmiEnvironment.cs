namespace Pmpi.Hosting.Pmi;

/// <summary>
/// The environment variables of a PMI launch: those Hydra's <c>mpiexec</c> and <c>srun --mpi=pmi2</c> set for the
/// processes they start (MPICH's <c>PMI_v2_Wire_Protocol</c>, Slurm's <c>mpi_pmi2.c</c>), and PMPI's own choices for
/// such a rank, which a user sets through the launcher (<c>mpiexec -genv NAME value</c>, <c>srun --export</c>).
/// </summary>
internal static class PmiEnvironment
{
    /// <summary>The inherited socket to the PMI server (Hydra's default; slurmstepd's).</summary>
    public const string Fd = "PMI_FD";

    /// <summary>The PMI server's <c>host:port</c>, when the launcher listens instead (Hydra's <c>-pmi-port</c>).</summary>
    public const string Port = "PMI_PORT";

    /// <summary>With <see cref="Port"/>: who this process is, which it tells the server as it connects.</summary>
    public const string Id = "PMI_ID";

    /// <summary>The process's rank, set with <see cref="Fd"/>.</summary>
    public const string Rank = "PMI_RANK";

    /// <summary>The number of processes, set with <see cref="Fd"/>.</summary>
    public const string Size = "PMI_SIZE";

    /// <summary>The job's id (Slurm's <c>jobid.stepid</c>), which PMI-2's <c>fullinit</c> passes on.</summary>
    public const string JobId = "PMI_JOBID";

    /// <summary>
    /// Which PMI wire protocol a rank speaks: <c>1</c> (the default, as MPICH's own ranks speak to Hydra) or <c>2</c>.
    /// Hydra and Slurm's pmi2 plugin serve both, and tell them apart by the rank's first line.
    /// </summary>
    public const string Version = "PMPI_PMI_VERSION";

    /// <summary>
    /// <c>network</c>: ranks of one node talk over the network instead of shared memory, as <c>pmpi run --links
    /// network</c> asks; <c>shared-memory</c> (the default): through shared memory.
    /// </summary>
    public const string Links = "PMPI_LINKS";

    /// <summary>The error for a variable that is set but not as it should be: the launcher's, or one of PMPI's that a user set.</summary>
    public static MpiException Malformed(string name, string? value, string expected) =>
        new(ErrorClass.InvalidArgument, $"Environment variable {name}='{value}' is not {expected}; " + (name.StartsWith("PMPI_", StringComparison.Ordinal)
            ? $"set it through the launcher (mpiexec -genv {name} <value>, srun --export=ALL,{name}=<value>) or leave it unset."
            : "the launcher (Hydra's mpiexec, srun --mpi=pmi2) sets it for the processes it starts."));
}
