using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run -H` and `--hostfile`, mpirun's ways to name hosts, and `--map-by` over them.</summary>
public sealed class HostListTests
{
    [LinuxFact]
    public async Task Run_HostfileOfLocalhostWithoutSlots_RunsOneRankPerLogicalCore()
    {
        // Arrange
        using var scratch = new ScratchDirectory();
        var hostfile = scratch.Write("hosts", "# this machine\nlocalhost\n");

        // Act
        await using var run = PmpiCli.Start(["run", "--hostfile", hostfile, "/bin/sh", "-c", "echo size=$PMPI_SIZE"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(System.Environment.ProcessorCount, run.Stdout.Count(line => line.EndsWith($"] size={System.Environment.ProcessorCount}", StringComparison.Ordinal)));
    }

    [LinuxFact]
    public async Task Run_LocalhostWithMoreSlotsThanCores_RunsThatManyWithoutOversubscribe()
    {
        // Arrange: slots are what the host list says, as with mpirun, whatever the cores.
        int slots = System.Environment.ProcessorCount + 1;

        // Act
        await using var run = PmpiCli.Start(["run", "-H", $"localhost:{slots}", "/bin/sh", "-c", "echo size=$PMPI_SIZE"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(slots, run.Stdout.Count(line => line.EndsWith($"] size={slots}", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task Run_MoreRanksThanTheHostsSlots_FailsNamingTheSlotsAndOversubscribe()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-H", "localhost,localhost", "-n", "3", PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("pmpi: -n 3 exceeds the 2 slots of the hosts -H names; add --oversubscribe to run up to 16.", run.Stderr);
    }

    [Fact]
    public async Task Run_HostfileLineThatCannotBeRead_FailsNamingFileAndLine()
    {
        // Arrange
        using var scratch = new ScratchDirectory();
        var hostfile = scratch.Write("hosts", "localhost slots=2\n\nnode2 slots=two\n");

        // Act
        await using var run = PmpiCli.Start(["run", "--hostfile", hostfile, PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains($"pmpi run: {hostfile}(3): error: 'slots=two': slots takes a number (1 or more).", run.Stderr);
    }

    [Fact]
    public async Task Run_InsideASlurmAllocationWithAMalformedNodeList_FailsNamingTheVariable()
    {
        // Act: no srun is ever reached; the allocation is refused first.
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll],
            new Dictionary<string, string?> { ["SLURM_JOB_ID"] = "77", ["SLURM_JOB_NODELIST"] = "node[01-04", ["SLURM_TASKS_PER_NODE"] = "1(x4)" });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("pmpi run: inside a Slurm allocation pmpi run runs on its nodes, but SLURM_JOB_NODELIST=node[01-04 is not a Slurm hostlist expression such as node[01-04,07]: '[' without ']'.", run.Stderr);
    }

    [LinuxFact]
    public async Task Run_InsideASlurmAllocationWithHosts_TheHostsWin()
    {
        // Act: an allocation of nodes that do not exist, which -H overrides, as with mpirun.
        await using var run = PmpiCli.Start(["run", "-H", "localhost:2", "/bin/sh", "-c", "echo size=$PMPI_SIZE"],
            new Dictionary<string, string?> { ["SLURM_JOB_ID"] = "77", ["SLURM_JOB_NODELIST"] = "nowhere[1-4]", ["SLURM_TASKS_PER_NODE"] = "1(x4)" });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: two ranks on the embedded agent.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(2, run.Stdout.Count(line => line.EndsWith("] size=2", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task Run_AnotherHostWithoutMaster_FailsNamingTheHostAndMaster()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-H", "localhost:1,node-elsewhere:2", PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith("pmpi run: node-elsewhere is not this machine", StringComparison.Ordinal) && line.Contains("--master host:port", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(new string[0], "a a b b")]
    [InlineData(new[] { "--map-by", "slot" }, "a a b b")]
    [InlineData(new[] { "--map-by", "node" }, "a b a b")]
    public async Task ShowRoutes_TwoHostsOfTwoSlots_PlacesRanksAsMapBySays(string[] mapBy, string expected)
    {
        // Act: nothing runs, so the hosts need no agents.
        await using var run = PmpiCli.Start(["run", "--show-routes", "-H", "a:2,b:2", .. mapBy, "-n", "4", PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: "0 (a) -> 0 (a): self" names each rank's node.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        var nodes = Enumerable.Range(0, 4).Select(rank => run.Stdout.Single(line => line.StartsWith($"{rank} (", StringComparison.Ordinal) && line.EndsWith(": self", StringComparison.Ordinal)).Split(' ')[1].Trim('(', ')'));
        Assert.Equal(expected, string.Join(' ', nodes));
    }

    [Fact]
    public async Task Run_HostfileOfTwoAgentsMappedByNode_RanksAlternateAndKnowTheirNodes()
    {
        // Arrange: two agents on this machine, off the default port, named by PMPI's port=N.
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2);
        using var scratch = new ScratchDirectory();
        var hostfile = scratch.Write("hosts", $"127.0.0.1 slots=2 port={nodeA.Port}\n127.0.0.1 slots=2 port={nodeB.Port}  # the second node\n");

        // Act
        await using var run = PmpiCli.Start(["run", "--master", nodeA.Address.ToString(), "--hostfile", hostfile, "--map-by", "node", PmpiCli.TestRanksDll, "place"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: four ranks, one slot each, alternating between the nodes.
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal(["node-a", "node-b", "node-a", "node-b"], hellos.OrderBy(h => h.Rank).Select(h => h.Agent));
            Assert.Contains("[0] place local=0/2 node=0 variables=0/2 node=0", run.Stdout);
            Assert.Contains("[1] place local=0/2 node=1 variables=0/2 node=1", run.Stdout);
            Assert.Contains("[2] place local=1/2 node=0 variables=1/2 node=0", run.Stdout);
            Assert.Contains("[3] place local=1/2 node=1 variables=1/2 node=1", run.Stdout);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
