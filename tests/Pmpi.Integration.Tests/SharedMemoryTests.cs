using System.Diagnostics;
using System.Globalization;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// Ranks of one node talk through shared memory (Devices/SharedMemory) as real processes: each maps its pairs'
/// segments, whose names are gone from /dev/shm as soon as both ranks mapped them, so nothing is left after a normal
/// end or a kill -9 (and a name whose second rank never came is removed by the agent); a job all on one node opens no rank endpoint; a rank killed mid-message ends the job fast, naming it.
/// </summary>
public sealed class SharedMemoryTests
{
    private static readonly TimeSpan LoadAllowance = TimeSpan.FromSeconds(3);

    [LinuxFact]
    public async Task Run_ThreeRanksOnOneNode_MapSharedMemoryThatNoNameOutlivesAndListenOnNoPort()
    {
        // Arrange
        var before = Segments();
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "3", PmpiCli.TestRanksDll, "block"]);
        var hellos = new List<RankHello>();
        try
        {
            for (int rank = 0; rank < 3; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);

            // Assert: every rank maps its two peers' segments, whose names are already removed.
            foreach (var hello in hellos)
            {
                var mapped = File.ReadLines($"/proc/{hello.ProcessId}/maps").Where(line => line.Contains("/dev/shm/pmpi-", StringComparison.Ordinal)).ToList();
                Assert.True(mapped.Select(line => line[line.IndexOf("/dev/shm/", StringComparison.Ordinal)..]).Distinct().Count() == 2, $"rank {hello.Rank} maps:\n{string.Join('\n', mapped)}");
                Assert.All(mapped, line => Assert.EndsWith("(deleted)", line));
            }
            Assert.Equal(before, Segments());
            // A job all on one node needs no rank endpoint, and its ranks get their table at launch and join through
            // their agent, not by registering with the master: no rank holds a TCP socket, listening or connected.
            var tcp = TcpSocketInodes();
            Assert.All(hellos, hello => Assert.Empty(SocketInodes(hello.ProcessId).Intersect(tcp)));

            // Act: kill -9 every rank.
            RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            // Assert
            Assert.NotEqual(0, code);
            Assert.Equal(before, Segments());
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_RanksWaitingInAReceive_EachSleepsWithOneSharedMemoryReaderAndUsesNoCpu()
    {
        // Arrange: four ranks of one node, each waiting in a receive nobody sends to.
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "4", PmpiCli.TestRanksDll, "block"]);
        var hellos = new List<RankHello>();
        try
        {
            for (int rank = 0; rank < 4; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);
            await Task.Delay(TimeSpan.FromSeconds(1)); // past every spin

            // Act
            var before = hellos.ToDictionary(hello => hello.Rank, hello => CpuSeconds(hello.ProcessId));
            await Task.Delay(TimeSpan.FromSeconds(3));
            var used = hellos.ToDictionary(hello => hello.Rank, hello => CpuSeconds(hello.ProcessId) - before[hello.Rank]);

            // Assert: a rank reads its three peers' rings with one thread (Linux cuts its name to 15 characters),
            // and three seconds of waiting cost each rank next to no CPU (clock ticks are 10 ms).
            foreach (var hello in hellos)
            {
                var names = Directory.EnumerateDirectories($"/proc/{hello.ProcessId}/task").Select(task => File.ReadAllText(Path.Combine(task, "comm")).Trim()).ToList();
                Assert.True(names.Count(name => name == "PMPI shared mem") == 1, $"rank {hello.Rank}'s threads: {string.Join(", ", names)}");
                Assert.True(used[hello.Rank] < 0.15, $"rank {hello.Rank} used {used[hello.Rank]:F2} s of CPU in 3 s of waiting in a receive.");
            }
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [Fact]
    public async Task Run_RingSsendBigMessageAndCollectivesOnOneNode_SameResultsOverSharedMemoryAndOverTheNetwork()
    {
        foreach (string links in new[] { "shared", "network" })
        {
            await using var run = PmpiCli.Start(["run", "--links", links, "--oversubscribe", "-n", "4", PmpiCli.TestRanksDll, "domains"]);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);

            Assert.True(code == 0, $"pmpi run --links {links} exited with {code}.\n{run.Transcript}");
            Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        }
    }

    [Fact]
    public async Task Run_SharedMemoryAndNetworkPeersMixed_WildcardReceivesKeepEachSendersOrder()
    {
        // Arrange: ranks 0 and 1 on node a (shared memory between them), rank 2 on node b (gRPC to both).
        await using var nodeA = await AgentProcess.StartAsync("node-a", slots: 2);
        await using var nodeB = await AgentProcess.StartAsync("node-b", slots: 1);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("mixed.xml", Computation.Of("mixed", 3, ["wildcard", "300"], ("a", nodeA.Endpoint, 2), ("b", nodeB.Endpoint, 1)));

        // Act
        await using var routes = PmpiCli.Start(["run", "--show-routes", file]);
        await routes.WaitForExitAsync(PmpiCli.Timeout);
        await using var run = PmpiCli.Start(["run", "--master", nodeA.Endpoint, file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: rank 0 took 300 messages from each, in each sender's order, over both kinds of link.
        Assert.Contains(routes.Stdout, line => line.StartsWith("0 (a) -> 1 (a): shared memory", StringComparison.Ordinal));
        Assert.Contains(routes.Stdout, line => line.StartsWith("2 (b) -> 0 (a): direct", StringComparison.Ordinal));
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("[0] wildcard ok 300,300", run.Stdout);
    }

    [LinuxFact]
    public async Task Run_RankKilledMidMessage_JobEndsWithin5sNamingIt()
    {
        // Arrange: rank 0 streams 16 MB messages to rank 1 through their shared memory.
        await using var run = PmpiCli.Start(["run", "-n", "2", PmpiCli.TestRanksDll, "stream"]);
        var hellos = new List<RankHello>();
        try
        {
            await run.WaitForLineAsync(line => line == "[1] streaming", PmpiCli.Timeout, "rank 1 receiving");
            hellos = RankHello.All(run.Stdout);

            // Act
            await Signals.SendAsync("KILL", hellos.Single(h => h.Rank == 1).ProcessId);
            var clock = Stopwatch.StartNew();
            int code = await run.WaitForExitAsync(TimeSpan.FromSeconds(5) + LoadAllowance);
            clock.Stop();

            // Assert
            Assert.True(code != 0, $"pmpi run exited with 0 although rank 1 was killed.\n{run.Transcript}");
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"pmpi run took {clock.Elapsed.TotalSeconds:F1} s to end after rank 1 was killed.\n{run.Transcript}");
            Assert.Contains(run.Stderr, line => line.Contains("rank 1", StringComparison.Ordinal));
            Assert.Empty(await RankProcesses.SurvivorsAfterAsync(hellos[0].JobId, hellos.Select(h => h.ProcessId), LoadAllowance));
        }
        finally
        {
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    [LinuxFact]
    public async Task Run_RankKilledBeforeItsPeerMappedTheirSegment_TheAgentRemovesTheName()
    {
        // Arrange: rank 1 sleeps before it starts PMPI, so rank 0 makes their segment alone; the job gives up on
        // rank 1 after 3 s and kills both, before rank 0 could remove the name itself.
        var before = Segments();
        await using var run = PmpiCli.Start(["run", "--register-timeout", "3", "-n", "2", PmpiCli.TestRanksDll, "late", "1", "120"]);
        var hellos = new List<RankHello>();
        try
        {
            var made = Stopwatch.StartNew();
            while (Segments().Except(before).Count() != 1 && made.Elapsed < PmpiCli.Timeout) await Task.Delay(50);
            Assert.True(Segments().Except(before).Count() == 1, $"rank 0 made no segment for rank 1.\n{run.Transcript}");

            // Act
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            hellos = RankHello.All(run.Stdout);

            // Assert
            Assert.True(code == 1, $"pmpi run exited with {code}, expected 1.\n{run.Transcript}");
            Assert.Equal(before, Segments());
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
            foreach (var left in Segments().Except(before)) File.Delete(left);
        }
    }

    /// <summary>The inodes of this network namespace's TCP sockets, in any state (IPv4 and IPv6).</summary>
    private static HashSet<string> TcpSocketInodes() =>
        [.. new[] { "/proc/net/tcp", "/proc/net/tcp6" }.Where(File.Exists).SelectMany(File.ReadLines).Skip(1)
            .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries)).Where(fields => fields.Length > 9 && fields[9] != "0").Select(fields => fields[9])];

    /// <summary>The inodes of the sockets process <paramref name="processId"/> holds.</summary>
    private static IEnumerable<string> SocketInodes(int processId) =>
        Directory.EnumerateFileSystemEntries($"/proc/{processId}/fd").Select(fd => new FileInfo(fd).LinkTarget ?? "")
            .Where(target => target.StartsWith("socket:[", StringComparison.Ordinal)).Select(target => target[8..^1]);

    /// <summary>User and system CPU seconds process <paramref name="processId"/> has used (/proc/PID/stat, fields 14 and 15).</summary>
    private static double CpuSeconds(int processId)
    {
        // "pid (comm) state ...": comm may hold spaces and parentheses, so count fields after the last ')'.
        var stat = File.ReadAllText($"/proc/{processId}/stat");
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / 100.0;
    }

    private static string[] Segments() =>
        Directory.Exists("/dev/shm") ? [.. Directory.EnumerateFiles("/dev/shm", "pmpi-*").Order()] : [];
}
