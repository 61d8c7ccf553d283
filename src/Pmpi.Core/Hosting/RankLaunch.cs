using Pmpi.Hosting.Pmi;

namespace Pmpi.Hosting;

/// <summary>What started this process, as its environment shows.</summary>
internal enum Launcher
{
    /// <summary>Nothing that makes it a rank of a larger job: it runs on its own (a singleton, or ranks as threads).</summary>
    None,

    /// <summary>A PMPI agent (<c>pmpi run</c>): the PMPI_* identity is set.</summary>
    Agent,

    /// <summary>A PMI launcher (Hydra's <c>mpiexec</c>, <c>srun --mpi=pmi2</c>): PMI_FD or PMI_PORT is set.</summary>
    Pmi,
}

/// <summary>Tells how this process was started, and refuses a launcher of several processes that PMPI cannot join.</summary>
internal static class RankLaunch
{
    /// <summary>
    /// Which launcher started this process. A PMPI agent's identity wins over anything the agent itself inherited (an
    /// agent that srun started passes SLURM_* and PMI_* down to its ranks).
    /// </summary>
    /// <remarks>
    /// A launcher that <see cref="ForeignLauncher"/> recognises ends the process here with its message on standard
    /// error and exit code <see cref="ForeignLauncher.ExitCode"/>: as MPI_Init does by default, since no caller could
    /// run on in a world that is not the one it was started for.
    /// </remarks>
    public static Launcher Detect(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (RankIdentity.IsLaunched(read)) return Launcher.Agent;
        if (read(PmiEnvironment.Fd) is { Length: > 0 } || read(PmiEnvironment.Port) is { Length: > 0 }) return Launcher.Pmi;
        if (ForeignLauncher.Describe(read) is { } refusal)
        {
            Console.Error.WriteLine(refusal);
            Console.Error.Flush();
            System.Environment.Exit(ForeignLauncher.ExitCode);
        }
        return Launcher.None;
    }
}
