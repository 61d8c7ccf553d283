using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// `pmpi run` binds each rank to a core of its own where the node has one for each of the job's ranks there, as
/// mpirun does, and `--bind-to none` leaves them where the scheduler puts them. Read from each rank's threads'
/// Cpus_allowed_list.
/// </summary>
public sealed class CoreBindingTests
{
    [LinuxFact]
    public async Task Run_TwoRanksOnANodeWithACoreForEach_EachRankOnACoreOfItsOwn()
    {
        Assert.True(System.Environment.ProcessorCount >= 2, "This test needs a machine with two processors or more.");

        var cores = await RunCoresAsync([]);

        Assert.All(cores, list => Assert.Matches("^[0-9]+$", list));
        Assert.NotEqual(cores[0], cores[1]);
    }

    [LinuxFact]
    public async Task Run_BindToNone_EachRankMayUseEveryProcessor()
    {
        string everyProcessor = File.ReadLines("/proc/self/status").First(line => line.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))["Cpus_allowed_list:".Length..].Trim();

        var cores = await RunCoresAsync(["--bind-to", "none"]);

        Assert.All(cores, list => Assert.Equal(everyProcessor, list));
    }

    /// <summary>Runs two ranks of the cores scenario; what each rank's threads may run on, by rank.</summary>
    private static async Task<string[]> RunCoresAsync(string[] options)
    {
        await using var run = PmpiCli.Start(["run", .. options, "-n", "2", PmpiCli.TestRanksDll, "cores"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        return [.. Enumerable.Range(0, 2).Select(rank =>
        {
            string prefix = $"[{rank}] cores: ";
            var line = run.Stdout.SingleOrDefault(line => line.StartsWith(prefix, StringComparison.Ordinal));
            Assert.True(line is not null, $"Rank {rank} did not say where it may run.\n{run.Transcript}");
            return line[prefix.Length..].Trim();
        })];
    }
}
