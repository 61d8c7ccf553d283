using System.Globalization;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// Recognises a launcher that started this process as one of several but that PMPI cannot join: each such process
/// would otherwise make a world of one, and a job of N would silently run N times. What each launcher sets for its
/// processes: Open MPI's mpirun <c>OMPI_COMM_WORLD_SIZE</c> (and PMIx's variables), any PMIx launcher
/// <c>PMIX_RANK</c> (Open MPI 5's prterun, <c>srun --mpi=pmix</c>), Slurm's srun <c>SLURM_PROCID</c> and
/// <c>SLURM_STEP_NUM_TASKS</c> (a batch script's own step has no SLURM_STEP_NUM_TASKS), and a PMI launcher that
/// offers neither <c>PMI_FD</c> nor <c>PMI_PORT</c> (Microsoft MPI's mpiexec, Cray's PMI) <c>PMI_SIZE</c>.
/// A launch of one process (<c>mpirun -np 1</c>) is a world of one, which is what it asks for.
/// </summary>
internal static class ForeignLauncher
{
    /// <summary>The exit code of a process that refuses a launcher it cannot join.</summary>
    public const int ExitCode = 1;

    private const string Alternatives = "'pmpi run -n {0} <program>', MPICH's 'mpiexec.hydra -n {0} <program>' (Debian package mpich) or 'srun --mpi=pmi2 -n {0} <program>'";

    /// <summary>
    /// Why this process cannot run, naming the variable that shows the launcher and what to use instead; null when
    /// no launcher of several processes is in the environment (or one PMPI joins: PMI_FD or PMI_PORT is set).
    /// </summary>
    public static string? Describe(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (read(PmiEnvironment.Fd) is { Length: > 0 } || read(PmiEnvironment.Port) is { Length: > 0 }) return null;
        if (Count(read, "OMPI_COMM_WORLD_SIZE") is > 1 and var ompi)
            return Refusal($"Open MPI's mpirun (OMPI_COMM_WORLD_SIZE={ompi}; this is its rank {read("OMPI_COMM_WORLD_RANK")})", ompi);
        if (read("PMIX_RANK") is { Length: > 0 } pmixRank)
        {
            // PMIx names no size in the environment; the launchers that set PMIX_RANK state it as their own.
            var size = Count(read, "OMPI_COMM_WORLD_SIZE") ?? Count(read, "SLURM_STEP_NUM_TASKS");
            if (size is not 1)
                return Refusal($"a PMIx launcher (PMIX_RANK={pmixRank}, PMIX_NAMESPACE={read("PMIX_NAMESPACE")}: Open MPI 5's mpirun, srun --mpi=pmix; PMPI speaks PMI-1 and PMI-2, not PMIx)", size);
        }
        if (read("SLURM_PROCID") is { Length: > 0 } task && Count(read, "SLURM_STEP_NUM_TASKS") is > 1 and var tasks)
            return Refusal($"Slurm's srun as task {task} of {tasks} (SLURM_STEP_NUM_TASKS={tasks}) with no PMI (srun's --mpi is none)", tasks);
        if (Count(read, PmiEnvironment.Size) is > 1 and var pmiSize)
            return Refusal($"a launcher that sets {PmiEnvironment.Size}={pmiSize} but offers its PMI neither as {PmiEnvironment.Fd} nor as {PmiEnvironment.Port} (Microsoft MPI's mpiexec, Cray's PMI)", pmiSize);
        return null;
    }

    private static string Refusal(string launcher, int? size)
    {
        string count = size?.ToString(CultureInfo.InvariantCulture) ?? "N";
        return $"PMPI: this process was started by {launcher}, which PMPI cannot join, so it stops rather than run as a world of one rank. " +
            $"Start the program with {string.Format(CultureInfo.InvariantCulture, Alternatives, count)}.";
    }

    private static int? Count(Func<string, string?> read, string name) =>
        int.TryParse(read(name), NumberStyles.None, CultureInfo.InvariantCulture, out var value) ? value : null;
}
