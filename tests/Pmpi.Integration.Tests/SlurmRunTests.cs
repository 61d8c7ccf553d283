using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// `pmpi run` inside a Slurm allocation of a real one-node cluster: under salloc it runs on the allocation's node and
/// slots through agents srun started, refuses more ranks than the allocation's slots naming it, and the sbatch
/// template (deploy/slurm/pmpi-job.sbatch) runs a job to COMPLETED, its agents' step ending normally, leaving no files.
/// </summary>
[Collection(SlurmCollection.Name)]
public sealed class SlurmRunTests(SlurmCluster slurm)
{
    /// <summary>A whole batch job: the allocation, pmpi run, its agents' start and stop.</summary>
    private static readonly TimeSpan JobTimeout = TimeSpan.FromMinutes(3);

    [SlurmFact]
    public async Task Sbatch_Template_JobCompletesWithTheRanksOutputAndLeavesNoFiles()
    {
        if (!OperatingSystem.IsLinux()) return;
        // Arrange: pmpi as the template finds it ($PMPI), a home of its own where pmpi run makes the agents' credential,
        // and no credential given, as for a Slurm user without a cluster.
        using var scratch = new ScratchDirectory();
        var home = Directory.CreateDirectory(Path.Combine(scratch.Path, "home")).FullName;
        var pmpi = scratch.Write("pmpi", $"#!/bin/sh\nexec {string.Join(' ', PmpiCli.Command.Select(word => $"'{word}'"))} \"$@\"\n");
        File.SetUnixFileMode(pmpi, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        var output = Path.Combine(scratch.Path, "job.out");

        // Act: four tasks on a node with fewer cores (--overcommit), so four ranks.
        var (jobId, state, exitCode) = await slurm.RunBatchJobAsync(
            ["--ntasks=4", "--overcommit", $"--output={output}", $"--chdir={scratch.Path}", Template, PmpiCli.TestRanksDll, "domains"],
            new Dictionary<string, string?> { ["PMPI"] = pmpi, ["HOME"] = home, ["PMPI_CREDENTIALS"] = null, ["TMPDIR"] = TestCluster.TempDirectory },
            JobTimeout);

        // Assert: the job and its agents' step ended normally, with rank 0's results of the four ranks.
        var lines = File.ReadAllLines(output);
        string transcript = $"Job {jobId}: {state}, exit code {exitCode}.\n{string.Join('\n', lines)}\n{slurm.Transcript}";
        Assert.True(state == "COMPLETED" && exitCode == "0:0", transcript);
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", lines);
        for (int rank = 0; rank < 4; rank++) Assert.Contains(lines, line => line.StartsWith($"[{rank}] hello rank={rank} size=4 ", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, line => line.Contains("CANCELLED", StringComparison.Ordinal) || line.Contains("agents' step ended", StringComparison.Ordinal));
        // No credential, work directory or log is left: the home holds at most the empty ~/.pmpi, the scratch what the test put there.
        Assert.DoesNotContain(Directory.EnumerateFileSystemEntries(home, "*", SearchOption.AllDirectories), entry => Path.GetFileName(entry) != ".pmpi");
        Assert.Equal(["home", "job.out", "pmpi"], Directory.EnumerateFileSystemEntries(scratch.Path).Select(Path.GetFileName).Order());
    }

    [SlurmFact]
    public async Task Salloc_PmpiRunFourRanks_RunsOnTheAllocationsNodeThroughAnAgentStep()
    {
        // Act: the rank program, then a program that prints where each rank runs, without -n (one rank per task).
        await using var run = Salloc(["--ntasks=4", "--overcommit"], ["run", "-n", "4", PmpiCli.TestRanksDll, "domains"]);
        int code = await run.WaitForExitAsync(JobTimeout);
        await using var probe = Salloc(["--ntasks=3", "--overcommit"], ["run", "/bin/sh", "-c", "echo on $SLURMD_NODENAME job $SLURM_JOB_ID step $SLURM_STEP_ID"]);
        int probeCode = await probe.WaitForExitAsync(JobTimeout);

        // Assert: four ranks of one job with correct results; three ranks run as tasks of a step of the allocation, on its node.
        Assert.True(code == 0, $"salloc exited with {code}.\n{run.Transcript}\n{slurm.Transcript}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        Assert.True(probeCode == 0, $"salloc exited with {probeCode}.\n{probe.Transcript}");
        var places = probe.Stdout.Where(line => line.Contains(" on ", StringComparison.Ordinal)).ToList();
        Assert.Equal(3, places.Count);
        Assert.All(places, line => Assert.Matches($@"^\[\d\] on {System.Environment.MachineName} job \d+ step \d+$", line));
        Assert.DoesNotContain(run.Stderr.Concat(probe.Stderr), line => line.Contains("agents' step ended", StringComparison.Ordinal));
    }

    [SlurmFact]
    public async Task Salloc_MoreRanksThanTheAllocationsSlots_RefusedNamingTheAllocationUnlessOversubscribed()
    {
        // Act
        await using var refused = Salloc(["--ntasks=2", "--overcommit"], ["run", "-n", "3", PmpiCli.TestRanksDll, "domains"]);
        int refusedCode = await refused.WaitForExitAsync(JobTimeout);
        await using var oversubscribed = Salloc(["--ntasks=2", "--overcommit"], ["run", "-n", "3", "--oversubscribe", PmpiCli.TestRanksDll, "domains"]);
        int oversubscribedCode = await oversubscribed.WaitForExitAsync(JobTimeout);

        // Assert: refused before any agent starts, naming the variables the slots came from; run with --oversubscribe.
        Assert.True(refusedCode == 2, $"salloc exited with {refusedCode}.\n{refused.Transcript}");
        Assert.Contains(refused.Stderr, line => line.StartsWith("pmpi: -n 3 exceeds the 2 slots of the Slurm allocation (SLURM_JOB_ID=", StringComparison.Ordinal)
            && line.Contains($", SLURM_JOB_NODELIST={System.Environment.MachineName}, SLURM_TASKS_PER_NODE=2); add --oversubscribe", StringComparison.Ordinal));
        Assert.DoesNotContain(refused.Stdout, line => line.Contains("hello rank=", StringComparison.Ordinal));
        Assert.True(oversubscribedCode == 0, $"salloc exited with {oversubscribedCode}.\n{oversubscribed.Transcript}");
        Assert.Contains("[0] ring=3 ssend=ok big=ok allreduce=6 gather=1,2,3", oversubscribed.Stdout);
    }

    /// <summary>deploy/slurm/pmpi-job.sbatch in the repository the tests were built from.</summary>
    private static string Template
    {
        get
        {
            for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
            {
                var template = Path.Combine(directory.FullName, "deploy", "slurm", "pmpi-job.sbatch");
                if (File.Exists(template)) return template;
            }
            Assert.Fail($"deploy/slurm/pmpi-job.sbatch is not in a directory above {AppContext.BaseDirectory}.");
            return "";
        }
    }

    /// <summary>`salloc <paramref name="options"/> pmpi <paramref name="pmpiArguments"/>`, with the tests' credential.</summary>
    private ChildProcess Salloc(string[] options, string[] pmpiArguments) =>
        slurm.Salloc([.. options, .. PmpiCli.Command, .. pmpiArguments], PmpiCli.WithCredential(null));
}

/// <summary>The tests that share one <see cref="SlurmCluster"/>, one class at a time.</summary>
[CollectionDefinition(Name)]
public sealed class SlurmCollection : ICollectionFixture<SlurmCluster>
{
    /// <summary>The collection's name.</summary>
    public const string Name = "Slurm cluster";
}
