using System.Globalization;
using Grpc.Core;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Rank programs started by MPICH's Hydra (`mpiexec.hydra -n N dotnet program.dll`), joined into one job through
/// its PMI, PMI-1 and PMI-2, through the inherited socket and through Hydra's port; and started by Open MPI's
/// mpirun, which PMPI cannot join, refusing with a message instead of running as worlds of one.
/// </summary>
public sealed class PmiLaunchTests
{
    [Theory]
    [InlineData("1", false, "shared-memory")]
    [InlineData("2", false, "shared-memory")]
    [InlineData("1", true, "network")]
    [InlineData("2", true, "network")]
    public async Task MpiexecHydra_ThreeRanks_OneJobWithCorrectResults(string pmiVersion, bool pmiPort, string links)
    {
        // Act: a ring, synchronous sends, a 4 MB message and collectives across three rank processes.
        await using var run = MpiLaunchers.StartHydra([.. Hydra(pmiVersion, pmiPort, links), "-n", "3", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "domains"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: three processes, ranks 0-2 of one world of 3, and rank 0's results of the whole job.
        var hellos = RankHello.All(run.Stdout);
        Assert.True(code == 0, $"mpiexec.hydra exited with {code}.\n{run.Transcript}");
        Assert.Equal([0, 1, 2], hellos.Select(h => h.Rank).Order());
        Assert.All(hellos, h => Assert.Equal(3, h.Size));
        Assert.Equal(3, hellos.Select(h => h.ProcessId).Distinct().Count());
        Assert.Contains("[0] ring=3 ssend=ok big=ok allreduce=6 gather=1,2,3", run.Stdout);
    }

    [Theory]
    [InlineData("1")]
    [InlineData("2")]
    public async Task MpiexecHydra_RankThrows_JobEndsAtOnceNamingTheRank(string pmiVersion)
    {
        // Act: rank 1 throws while ranks 0 and 2 wait for a message that never comes.
        await using var run = MpiLaunchers.StartHydra([.. Hydra(pmiVersion, pmiPort: false, "shared-memory"), "-n", "3", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "throw", "1"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code != 0, $"mpiexec.hydra exited with 0 although rank 1 failed.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.Contains("Rank 1 failed", StringComparison.Ordinal) && line.Contains("scenario 'throw' fails on purpose", StringComparison.Ordinal));
    }

    [Fact]
    public async Task MpiexecHydra_ThreeRanksOnOneNode_EachKnowsItsPlaceOnTheNode()
    {
        // Act: Hydra sets none of PMPI's place variables; the ranks work their place out from the nodes they share.
        await using var run = MpiLaunchers.StartHydra([.. Hydra("2", pmiPort: false, "shared-memory"), "-n", "3", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "place"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"mpiexec.hydra exited with {code}.\n{run.Transcript}");
        for (int rank = 0; rank < 3; rank++)
            Assert.Contains(run.Stdout, line => line.StartsWith($"[{rank}] place local={rank}/3 node=0 ", StringComparison.Ordinal));
    }

    [Fact]
    public async Task MpiexecHydra_Spawn_FailsOnEveryRankNamingPmpiRun()
    {
        // Act: the last rank asks for one more rank, which only pmpi run's master could start.
        await using var run = MpiLaunchers.StartHydra([.. Hydra("1", pmiPort: false, "shared-memory"), "-n", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "spawn", "1"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: the same error on both ranks, which then end normally.
        Assert.True(code == 0, $"mpiexec.hydra exited with {code}.\n{run.Transcript}");
        for (int rank = 0; rank < 2; rank++)
            Assert.Contains($"[{rank}] spawn failed: Spawn needs a rank launched by an agent (pmpi run); rank 1 is a thread of an in-process job, a singleton or a rank that mpiexec or srun started, which has no master to start ranks.", run.Stdout);
    }

    [LinuxFact]
    public async Task MpiexecHydra_StrangerWithoutTheJobKey_RefusedAndTheJobRunsOn()
    {
        // Arrange: two ranks linked over the network wait for a file; rank 0's endpoint serves meanwhile.
        using var scratch = new ScratchDirectory();
        var trigger = Path.Combine(scratch.Path, "go");
        await using var run = MpiLaunchers.StartHydra([.. Hydra("1", pmiPort: false, "network"), "-n", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "await", trigger]);
        for (int rank = 0; rank < 2; rank++)
            await run.WaitForLineAsync(line => line == $"[{rank}] waiting", PmpiCli.Timeout, $"rank {rank} waiting");
        // Hydra's own listening socket leaks into the ranks it starts: the rank's endpoint is the port Hydra lacks.
        int port = ListeningPorts.Of(RankHello.All(run.Stdout).Single(h => h.Rank == 0).ProcessId).Except(ListeningPorts.Of(run.Id)).Single();
        using var channel = RpcChannels.For(new Uri(string.Create(CultureInfo.InvariantCulture, $"http://127.0.0.1:{port}")));

        // Act: a stream from a local process that knows the launcher's job but not the key PMPI put in its space.
        var error = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            using var stream = channel.StartCall(GrpcMethods.Connect, TimeSpan.FromSeconds(10));
            await stream.RequestStream.WriteAsync(new Frame { Hello = new Hello { JobId = "kvs", JobToken = Convert.ToHexString(new byte[32]), SourceWorldRank = 1 } });
            await stream.ResponseStream.ReadToEndAsync(PmpiCli.Timeout);
        }).WaitAsync(PmpiCli.Timeout);
        File.WriteAllText(trigger, "go");
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.True(code == 0, $"The job failed after a stranger's stream.\n{run.Transcript}");
        Assert.Contains("[0] allreduce=3 gather=1,2", run.Stdout);
    }

    [Fact]
    public async Task OpenMpiMpirun_TwoRanks_EachRefusesNamingTheLauncherAndExitsNonZero()
    {
        // Act
        await using var run = MpiLaunchers.StartOpenMpi(["-np", "2", PmpiCli.DotnetHost, PmpiCli.TestRanksDll, "collectives"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: no world of one ran (no hello), and the message says what started it and what to use.
        Assert.True(code != 0, $"mpirun exited with 0.\n{run.Transcript}");
        Assert.DoesNotContain(run.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
        Assert.Contains(run.Stderr, line => line.Contains("Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=2", StringComparison.Ordinal)
            && line.Contains("mpiexec.hydra -n 2", StringComparison.Ordinal) && line.Contains("srun --mpi=pmi2 -n 2", StringComparison.Ordinal));
    }

    /// <summary>Hydra's options: output tagged "[rank] " as `pmpi run` tags it, the PMI version and links the ranks use.</summary>
    private static string[] Hydra(string pmiVersion, bool pmiPort, string links) =>
        ["-l", .. pmiPort ? ["-pmi-port"] : Array.Empty<string>(), "-genv", "PMPI_PMI_VERSION", pmiVersion, "-genv", "PMPI_LINKS", links];
}
