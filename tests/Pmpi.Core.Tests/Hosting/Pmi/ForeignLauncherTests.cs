using Pmpi.Hosting.Pmi;

namespace Pmpi.Tests.Hosting.Pmi;

/// <summary>
/// A process that a launcher started as one of several, which PMPI cannot join, is told so (naming the variable and
/// what to use instead) instead of running as a world of one; the variables are those each launcher sets.
/// </summary>
public sealed class ForeignLauncherTests
{
    [Fact]
    public void Describe_OpenMpiMpirunOfTwo_NamesTheVariableAndTheLaunchersThatWork()
    {
        var message = ForeignLauncher.Describe(Read(("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_RANK", "1"), ("PMIX_RANK", "1")));

        Assert.NotNull(message);
        Assert.Contains("Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=2", message);
        Assert.Contains("pmpi run -n 2", message);
        Assert.Contains("mpiexec.hydra -n 2", message);
        Assert.Contains("srun --mpi=pmi2 -n 2", message);
    }

    [Fact]
    public void Describe_SrunWithoutPmi_NamesSlurmAndMpiPmi2()
    {
        var message = ForeignLauncher.Describe(Read(("SLURM_PROCID", "0"), ("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_NTASKS", "4")));

        Assert.NotNull(message);
        Assert.Contains("Slurm's srun as task 0 of 4 (SLURM_STEP_NUM_TASKS=4)", message);
        Assert.Contains("srun --mpi=pmi2 -n 4", message);
    }

    [Fact]
    public void Describe_SrunWithPmix_NamesPmix()
    {
        var message = ForeignLauncher.Describe(Read(("PMIX_RANK", "0"), ("PMIX_NAMESPACE", "slurm.pmix.7.0"), ("SLURM_PROCID", "0"), ("SLURM_STEP_NUM_TASKS", "2")));

        Assert.NotNull(message);
        Assert.Contains("PMIX_RANK=0", message);
        Assert.Contains("not PMIx", message);
    }

    [Fact]
    public void Describe_PmiSizeWithoutAChannel_NamesTheMissingVariables()
    {
        var message = ForeignLauncher.Describe(Read(("PMI_RANK", "0"), ("PMI_SIZE", "3"), ("PMI_SMPD_KEY", "x")));

        Assert.NotNull(message);
        Assert.Contains("PMI_SIZE=3", message);
        Assert.Contains("PMI_FD", message);
        Assert.Contains("PMI_PORT", message);
    }

    [Theory]
    [InlineData("PMI_FD", "6")]
    [InlineData("PMI_PORT", "node1:4000")]
    public void Describe_PmiChannel_IsNoRefusal(string channel, string value)
    {
        Assert.Null(ForeignLauncher.Describe(Read((channel, value), ("PMI_SIZE", "4"), ("SLURM_PROCID", "0"), ("SLURM_STEP_NUM_TASKS", "4"))));
    }

    [Fact]
    public void Describe_MpirunOfOne_IsNoRefusal()
    {
        // A world of one is what `mpirun -np 1` asks for.
        Assert.Null(ForeignLauncher.Describe(Read(("OMPI_COMM_WORLD_SIZE", "1"), ("OMPI_COMM_WORLD_RANK", "0"), ("PMIX_RANK", "0"))));
    }

    [Fact]
    public void Describe_BatchScriptOfAnAllocation_IsNoRefusal()
    {
        // sbatch -n 4 runs its script once, with SLURM_NTASKS=4 but no step of several tasks.
        Assert.Null(ForeignLauncher.Describe(Read(("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "12"))));
    }

    [Fact]
    public void Describe_NoLauncher_IsNoRefusal()
    {
        Assert.Null(ForeignLauncher.Describe(Read()));
    }

    private static Func<string, string?> Read(params (string Name, string Value)[] variables)
    {
        var map = variables.ToDictionary(v => v.Name, v => v.Value);
        return name => map.GetValueOrDefault(name);
    }
}
