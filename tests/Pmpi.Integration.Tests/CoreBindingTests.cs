using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// `pmpi run` binds each rank to a core of its own where the node has one for each of the job's ranks there, as
/// mpirun does, and `--bind-to none` leaves them where the scheduler puts them. Read from each rank's threads'
/// Cpus_allowed_list. `--report-bindings` has each rank say where it is bound, as mpirun's does.
/// </summary>
public sealed class CoreBindingTests
{
    [LinuxFact]
    public async Task Run_TwoRanksOnANodeWithACoreForEach_EachRankOnACoreOfItsOwn()
    {
        Assert.True(System.Environment.ProcessorCount >= 2, "This test needs a machine with two processors or more.");

        var (cores, stderr) = await RunCoresAsync([]);

        Assert.All(cores, list => Assert.Matches("^[0-9]+$", list));
        Assert.NotEqual(cores[0], cores[1]);
        Assert.DoesNotContain(stderr, line => line.Contains(" is bound to ", StringComparison.Ordinal));
    }

    [LinuxFact]
    public async Task Run_ReportBindings_EachRankNamesTheProcessorItRunsOn()
    {
        Assert.True(System.Environment.ProcessorCount >= 2, "This test needs a machine with two processors or more.");

        var (cores, stderr) = await RunCoresAsync(["--report-bindings"]);

        for (int rank = 0; rank < 2; rank++)
        {
            string prefix = $"[{rank}] pmpi: rank {rank} on {System.Environment.MachineName} (process ";
            Assert.Contains(stderr, line => line.StartsWith(prefix, StringComparison.Ordinal) && line.EndsWith($") is bound to processor {cores[rank]}", StringComparison.Ordinal));
        }
    }

    [LinuxFact]
    public async Task Run_ReportBindingsWithBindToNone_EachRankSaysItIsNotBound()
    {
        var (_, stderr) = await RunCoresAsync(["--bind-to", "none", "--report-bindings"]);

        for (int rank = 0; rank < 2; rank++)
            Assert.Contains(stderr, line => line.StartsWith($"[{rank}] pmpi: rank {rank} on ", StringComparison.Ordinal) && line.EndsWith(" is not bound (--bind-to none)", StringComparison.Ordinal));
    }

    [LinuxFact]
    public async Task Run_BindToNone_EachRankMayUseEveryProcessor()
    {
        string everyProcessor = File.ReadLines("/proc/self/status").First(line => line.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))["Cpus_allowed_list:".Length..].Trim();

        var (cores, _) = await RunCoresAsync(["--bind-to", "none"]);

        Assert.All(cores, list => Assert.Equal(everyProcessor, list));
    }

    /// <summary>Runs two ranks of the cores scenario; what each rank's threads may run on, by rank, and what pmpi run wrote on stderr.</summary>
    private static async Task<(string[] Cores, IReadOnlyList<string> Stderr)> RunCoresAsync(string[] options)
    {
        await using var run = PmpiCli.Start(["run", .. options, "-n", "2", PmpiCli.TestRanksDll, "cores"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        return ([.. Enumerable.Range(0, 2).Select(rank =>
        {
            string prefix = $"[{rank}] cores: ";
            var line = run.Stdout.SingleOrDefault(line => line.StartsWith(prefix, StringComparison.Ordinal));
            Assert.True(line is not null, $"Rank {rank} did not say where it may run.\n{run.Transcript}");
            return line[prefix.Length..].Trim();
        })], run.Stderr);
    }
}
