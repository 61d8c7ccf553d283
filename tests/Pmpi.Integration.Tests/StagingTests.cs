using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Program staging (`pmpi run --stage`, stage="true"): the program's directory as the submitter has it runs on nodes
/// that do not have it, from each agent's store of staged programs.
/// </summary>
public sealed class StagingTests
{
    /// <summary>Copies the test ranks, with everything they need, into <paramref name="directory"/>; returns the program's path there.</summary>
    private static string CopyTestRanks(string directory)
    {
        Directory.CreateDirectory(directory);
        foreach (var name in NodeProgramTests.TestRanksFiles()) File.Copy(Path.Combine(AppContext.BaseDirectory, name), Path.Combine(directory, name));
        return Path.Combine(directory, "Pmpi.TestRanks.dll");
    }

    /// <summary>A launcher that runs an agent in a mount namespace of its own, in which an empty tmpfs covers <paramref name="directory"/>.</summary>
    private static string[] Hiding(string directory) =>
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs -o size=1m pmpi-hidden \"$1\" && shift && exec \"$@\"", "sh", directory];

    /// <summary>Each rank's "where:" line: the directory its program ran from and its working directory, by rank.</summary>
    private static Dictionary<int, (string Program, string WorkingDirectory)> Where(IEnumerable<string> stdout) =>
        stdout.Where(line => line.Contains("] where: ", StringComparison.Ordinal)).ToDictionary(
            line => int.Parse(line[1..line.IndexOf(']', StringComparison.Ordinal)], System.Globalization.CultureInfo.InvariantCulture),
            line => (Between(line, "program=", " cwd="), Between(line, " cwd=", " sum=")));

    private static string Between(string line, string start, string end)
    {
        int from = line.IndexOf(start, StringComparison.Ordinal) + start.Length;
        return line[from..line.IndexOf(end, from, StringComparison.Ordinal)];
    }

    [MountNamespaceFact]
    public async Task Run_StagedProgramThatNoNodeHas_RunsOnBothNodesFromTheirStores()
    {
        // Arrange: each agent runs in a mount namespace of its own, in which an empty tmpfs covers the program's
        // directory; only `pmpi run`, the submitter, sees the program.
        using var scratch = new ScratchDirectory();
        var program = CopyTestRanks(Path.Combine(scratch.Path, "submitter-only"));
        var hidden = Hiding(Path.GetDirectoryName(program)!);
        var storeA = Path.Combine(scratch.Path, "store-a");
        var storeB = Path.Combine(scratch.Path, "store-b");
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2, launcher: hidden, stagingDirectory: storeA);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 2, launcher: hidden, stagingDirectory: storeB);
        var file = scratch.Write("staged.xml", Computation.Of("staged", TimeSpan.FromMinutes(2), [("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 2)],
            Computation.Ranks(program, 4, node: null, "where")));
        // The submitter's own store (its embedded master's, where it uploads first) in the scratch directory too.
        var submitterData = Path.Combine(scratch.Path, "submitter-data");

        // Act
        await using var run = PmpiCli.Start(["run", "--stage", file], new Dictionary<string, string?> { ["XDG_DATA_HOME"] = submitterData });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.Equal(["node-a", "node-a", "node-b", "node-b"], hellos.OrderBy(h => h.Rank).Select(h => h.Agent));
            var where = Where(run.Stdout);
            Assert.Equal([0, 1, 2, 3], where.Keys.Order());
            foreach (var (rank, store) in new[] { (0, storeA), (1, storeA), (2, storeB), (3, storeB) })
            {
                // The agent's copy, in its store's programs/<digest>/, and the ranks run in that directory.
                Assert.StartsWith(Path.Combine(store, "programs") + Path.DirectorySeparatorChar, where[rank].Program, StringComparison.Ordinal);
                Assert.Equal(where[rank].Program.TrimEnd(Path.DirectorySeparatorChar), where[rank].WorkingDirectory);
            }
            Assert.EndsWith(" sum=10", run.Stdout.First(line => line.StartsWith("[3] where: ", StringComparison.Ordinal)));
            Assert.Equal(where[0].Program, where[1].Program);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_StagedAcrossDomains_TheMasterShipsToTheOtherDomainsAgentThroughTheGateways()
    {
        // Arrange: the master is domain a's agent, so the submitter uploads to it, and it ships on to domain b's
        // agent through both gateways, as it launches there.
        using var scratch = new ScratchDirectory();
        var program = CopyTestRanks(Path.Combine(scratch.Path, "app"));
        var storeA = Path.Combine(scratch.Path, "store-a");
        var storeB = Path.Combine(scratch.Path, "store-b");
        await using var gatewayA = await GatewayProcess.StartAsync("a");
        await using var gatewayB = await GatewayProcess.StartAsync("b");
        await using var agentA = await AgentProcess.StartAsync("node-a", slots: 2, domain: "a", stagingDirectory: storeA);
        await using var agentB = await AgentProcess.StartAsync("node-b", slots: 2, domain: "b", stagingDirectory: storeB);
        var file = scratch.Write("staged-domains.xml", $"""
            <computation name="staged-domains" timeout="00:02:00" xmlns="urn:pmpi:computation:v1">
              <domain name="a" gateway="{gatewayA.Endpoint}"/>
              <domain name="b" gateway="{gatewayB.Endpoint}"/>
              <node name="a1" agent="{agentA.Endpoint}" domain="a" slots="2"/>
              <node name="b1" agent="{agentB.Endpoint}" domain="b" slots="2"/>
              <ranks program="{program}" count="4" stage="true"><arg>where</arg></ranks>
            </computation>
            """);

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agentA.Address.ToString(), file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        var hellos = RankHello.All(run.Stdout);
        try
        {
            Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
            var where = Where(run.Stdout);
            Assert.All([0, 1], rank => Assert.StartsWith(Path.Combine(storeA, "programs") + Path.DirectorySeparatorChar, where[rank].Program, StringComparison.Ordinal));
            Assert.All([2, 3], rank => Assert.StartsWith(Path.Combine(storeB, "programs") + Path.DirectorySeparatorChar, where[rank].Program, StringComparison.Ordinal));
            Assert.EndsWith(" sum=10", run.Stdout.First(line => line.StartsWith("[2] where: ", StringComparison.Ordinal)));
            var b = await gatewayB.StatusAsync();
            Assert.True(b.ControlCallsRelayed > 0, $"gateway b relayed no control call: {b}");
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_StageWithoutNodes_RanksRunTheStoresCopy_TheSameOnASecondRun()
    {
        // Arrange: mpirun's form on the embedded agent, whose store is the submitter's own.
        using var scratch = new ScratchDirectory();
        var program = CopyTestRanks(Path.Combine(scratch.Path, "app"));
        var data = Path.Combine(scratch.Path, "data");
        var store = Path.Combine(data, "pmpi", "staged");
        var environment = new Dictionary<string, string?> { ["XDG_DATA_HOME"] = data };

        // Act: twice; the second run finds every file in the store already.
        await using var first = PmpiCli.Start(["run", "--stage", "-n", "2", program, "where"], environment);
        int firstCode = await first.WaitForExitAsync(PmpiCli.Timeout);
        var filesAfterFirst = Directory.GetFiles(Path.Combine(store, "files")).Order().ToArray();
        await using var second = PmpiCli.Start(["run", "--stage", "-n", "2", program, "where"], environment);
        int secondCode = await second.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(firstCode == 0, $"pmpi run exited with {firstCode}.\n{first.Transcript}");
        Assert.True(secondCode == 0, $"pmpi run exited with {secondCode}.\n{second.Transcript}");
        var where = Where(first.Stdout);
        Assert.StartsWith(Path.Combine(store, "programs") + Path.DirectorySeparatorChar, where[0].Program, StringComparison.Ordinal);
        Assert.Equal(where[0].Program, Where(second.Stdout)[1].Program);
        Assert.Equal(NodeProgramTests.TestRanksFiles().Count(), filesAfterFirst.Length);
        Assert.Equal(filesAfterFirst, Directory.GetFiles(Path.Combine(store, "files")).Order().ToArray());
    }

    [Fact]
    public async Task Run_StageOfAProgramFoundOnPath_RefusedSayingWhy()
    {
        // Act: staging `hostname` would ship all of /usr/bin.
        await using var run = PmpiCli.Start(["run", "--stage", "-n", "1", "hostname"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith("pmpi run --stage: 'hostname' was found on PATH (", StringComparison.Ordinal)
            && line.EndsWith("staging ships a program's whole directory, so name a program in a directory of its own (e.g. bin/Release/net10.0/App.dll).", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Run_StagedProgramMissing_FailsNamingTheProgramAndStartsNothing()
    {
        // Arrange
        using var scratch = new ScratchDirectory();
        var missing = Path.Combine(scratch.Path, "absent", "app.dll");
        var file = scratch.Write("staged-missing.xml", Computation.Of("staged", TimeSpan.FromMinutes(1), [("a", "127.0.0.1:1", 2)],
            Computation.Ranks(missing, 2, node: null)));

        // Act
        await using var run = PmpiCli.Start(["run", "--stage", file], new Dictionary<string, string?> { ["XDG_DATA_HOME"] = Path.Combine(scratch.Path, "data") });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: refused by the submitter, before any agent is dialled.
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.Contains("staged-missing.xml(", StringComparison.Ordinal) && line.Contains($"cannot stage program '{missing}'", StringComparison.Ordinal)),
            $"pmpi run did not name the file, the group and the program.\n{run.Transcript}");
    }

    [Fact]
    public async Task Run_StagedProgramLargerThanTheAgentsLimit_RefusedNamingTheLimitAndRunsNothing()
    {
        // Arrange: an agent that keeps at most 1 MiB of staged files; the test ranks' directory holds more.
        using var scratch = new ScratchDirectory();
        var program = CopyTestRanks(Path.Combine(scratch.Path, "program"));
        var store = Path.Combine(scratch.Path, "store");
        await using var node = await AgentProcess.StartAsync("node-a", slots: 2, stagingDirectory: store, stagingLimitGib: "0.0009765625");

        // Act
        await using var run = PmpiCli.Start(["run", "--master", node.Endpoint, "--stage", "-n", "2", program, "hello"],
            new Dictionary<string, string?> { ["XDG_DATA_HOME"] = Path.Combine(scratch.Path, "submitter-data") });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: refused in the command line's terms, before any upload landed or any rank ran.
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.True(run.Stderr.Any(line => line.StartsWith($"pmpi run: staging program '{program}' failed: ResourceExhausted: ", StringComparison.Ordinal)
            && line.Contains("this agent keeps at most 1 MiB of staged files (pmpi agent --staging-limit)", StringComparison.Ordinal)),
            $"pmpi run did not name the program and the limit.\n{run.Transcript}");
        Assert.Empty(RankHello.All(run.Stdout));
        Assert.False(Directory.Exists(Path.Combine(store, "files")) && Directory.EnumerateFiles(Path.Combine(store, "files")).Any(), "a file was kept");
    }

    [MountNamespaceFact]
    public async Task Run_StagedProgramSpawns_ChildrenRunFromTheAgentsCopy()
    {
        // Arrange: the agent runs where an empty tmpfs covers the program's directory, so only its staged copy exists
        // there; three ranks of the staged program, whose root spawns two more of it.
        using var scratch = new ScratchDirectory();
        var program = CopyTestRanks(Path.Combine(scratch.Path, "submitter-only"));
        var hidden = Hiding(Path.GetDirectoryName(program)!);
        await using var node = await AgentProcess.StartAsync("node-a", slots: 5, launcher: hidden, stagingDirectory: Path.Combine(scratch.Path, "store"));

        // Act
        await using var run = PmpiCli.Start(["run", "--master", node.Endpoint, "--stage", "-n", "3", program, "spawn", "2"],
            new Dictionary<string, string?> { ["XDG_DATA_HOME"] = Path.Combine(scratch.Path, "submitter-data") });
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: the children found their program in the agent's copy and talked to their parents.
        var hellos = RankHello.All(run.Stdout);
        try
        {
            await SpawnTests.AssertSpawnedAsync(run, code, hellos, parents: 3, children: 2);
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }
}
