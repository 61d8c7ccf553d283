using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Rank programs started by Slurm's srun on a real one-node Slurm cluster: joined into one job through
/// `--mpi=pmi2` (over PMI-1 and PMI-2), a failing rank ending the step through PMI's abort, and srun without a PMI
/// or with PMIx refused with a message instead of running as worlds of one.
/// </summary>
[Collection(SlurmCollection.Name)]
public sealed class SlurmLaunchTests(SlurmCluster slurm)
{
    [SlurmFact]
    public async Task Srun_MpiPmi2_FourRanksOverEitherPmi_OneJobWithCorrectResults()
    {
        foreach (var version in new[] { "1", "2" })
        {
            // Act: four tasks on a node with fewer cores (--overcommit), tagged with their rank (--label).
            await using var run = slurm.Srun(["--mpi=pmi2", "--overcommit", "--label", "-n", "4", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "domains"],
                new Dictionary<string, string?> { ["PMPI_PMI_VERSION"] = version });
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert: ranks 0-3 of one world, and rank 0's results of the whole job.
            Assert.True(code == 0, $"srun exited with {code} (PMI-{version}).\n{run.Transcript}\n{slurm.Transcript}");
            var hellos = run.Stdout.Where(line => line.Contains(" hello rank=", StringComparison.Ordinal)).ToList();
            Assert.Equal(4, hellos.Count);
            for (int rank = 0; rank < 4; rank++) Assert.Contains($"{rank}: hello rank={rank} size=4 ", string.Join('\n', hellos), StringComparison.Ordinal);
            Assert.Contains("0: ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        }
    }

    [SlurmFact]
    public async Task Srun_MpiPmi2RankThrows_StepEndsAtOnceNamingTheRank()
    {
        foreach (var version in new[] { "1", "2" })
        {
            // Act: rank 1 throws while the others wait for a message that never comes; without PMI's abort, srun
            // (KillOnBadExit unset) would wait for them forever.
            await using var run = slurm.Srun(["--mpi=pmi2", "--overcommit", "--label", "-n", "3", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "throw", "1"],
                new Dictionary<string, string?> { ["PMPI_PMI_VERSION"] = version });
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.True(code != 0, $"srun exited with 0 although rank 1 failed (PMI-{version}).\n{run.Transcript}");
            Assert.Contains(run.Stderr.Concat(run.Stdout), line => line.Contains("Rank 1 failed", StringComparison.Ordinal) && line.Contains("scenario 'throw' fails on purpose", StringComparison.Ordinal));
        }
    }

    [SlurmFact]
    public async Task Srun_MpiPmi2RankCannotJoin_StepEndsAtOnceNamingTheCause()
    {
        // Act: rank 0 cannot read the links it is to choose for the job, while rank 1 waits for it in the launcher's
        // fence; without PMI's abort, srun would wait for rank 1 forever.
        await using var run = slurm.Srun(["--mpi=pmi2", "--overcommit", "-n", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "collectives"],
            new Dictionary<string, string?> { ["PMPI_LINKS"] = "carrier-pigeon" });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code != 0, $"srun exited with 0.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith("Rank 0 failed to join its job: Environment variable PMPI_LINKS='carrier-pigeon' is not shared-memory or network", StringComparison.Ordinal));
    }

    [SlurmFact]
    public async Task Srun_WithoutAPmi_EachTaskRefusesNamingSrunMpiPmi2()
    {
        // Act: the cluster's MpiDefault is none, as Slurm's own default.
        await using var run = slurm.Srun(["--overcommit", "-n", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "collectives"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code != 0, $"srun exited with 0.\n{run.Transcript}");
        Assert.DoesNotContain(run.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
        int refused = run.Stderr.Count(line => line.Contains("Slurm's srun as task", StringComparison.Ordinal) && line.Contains("(SLURM_STEP_NUM_TASKS=2)", StringComparison.Ordinal)
            && line.Contains("'srun --mpi=pmi2 -n 2 <program>'", StringComparison.Ordinal));
        Assert.True(refused == 2, $"{refused} of the 2 tasks refused naming srun --mpi=pmi2.\n{run.Transcript}");
    }

    [SlurmFact]
    public async Task Srun_MpiPmix_EachTaskRefusesNamingPmix()
    {
        // Act
        await using var run = slurm.Srun(["--mpi=pmix", "--overcommit", "-n", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "collectives"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code != 0, $"srun exited with 0.\n{run.Transcript}");
        Assert.DoesNotContain(run.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
        int refused = run.Stderr.Count(line => line.Contains("a PMIx launcher (PMIX_RANK=", StringComparison.Ordinal) && line.Contains("not PMIx", StringComparison.Ordinal));
        Assert.True(refused == 2, $"{refused} of the 2 tasks refused naming PMIx.\n{run.Transcript}");
    }
}
