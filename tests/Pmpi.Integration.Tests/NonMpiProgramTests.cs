using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Programs that never start PMPI run as mpirun runs them (`mpirun -n 2 hostname`): each rank's process runs with its
/// place in the environment, and the job succeeds when all exit 0. Once one rank of the world registers, the others
/// must too (LivenessTests has a rank that exits first).
/// </summary>
public sealed class NonMpiProgramTests
{
    [LinuxFact]
    public async Task Run_ShellOnTwoRanks_EachPrintsItsPlaceAndTheJobSucceeds()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "2", "/bin/sh", "-c", "echo rank=$PMPI_RANK of $PMPI_SIZE local=$PMPI_LOCAL_RANK/$PMPI_LOCAL_SIZE node=$PMPI_NODE_RANK"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] rank=0 of 2 local=0/2 node=0", run.Stdout);
        Assert.Contains("[1] rank=1 of 2 local=1/2 node=0", run.Stdout);
    }

    [LinuxFact]
    public async Task Run_ProgramsRunningLongerThanTheRegisterTimeout_AreNotWaitedForToRegister()
    {
        // Act: no rank ever registers, and each runs past the 1 s a registering job would allow.
        await using var run = PmpiCli.Start(["run", "--register-timeout", "1", "-n", "2", "/bin/sh", "-c", "sleep 2; echo slept"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(2, run.Stdout.Count(line => line.EndsWith("] slept", StringComparison.Ordinal)));
    }

    [LinuxFact]
    public async Task Run_NonMpiProgramExitsNonZero_FailsWithItsCode()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "2", "/bin/sh", "-c", "exit $((PMPI_RANK + 3))"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: the first to fail is either rank; the code is that rank's.
        Assert.True(code is 3 or 4, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.Contains($"failed (exit code {code})", StringComparison.Ordinal));
    }
}
