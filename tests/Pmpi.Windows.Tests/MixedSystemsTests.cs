using System.Globalization;
using System.Text.RegularExpressions;

namespace Pmpi.Windows.Tests;

/// <summary>
/// One computation across a Linux node and a Windows node: a `pmpi agent` of the Linux build and one of the Windows
/// build under Wine, each running ranks of its own build. The computation file names the Windows programs by their
/// Windows paths, which the Linux submitter passes to the Windows node as written.
/// </summary>
[Collection(WindowsBuild.Collection)]
public sealed partial class MixedSystemsTests(WindowsBuild windows)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    [WineFact]
    public async Task Run_TwoRanksOnALinuxNodeAndTwoOnAWindowsNode_RingSsendBigMessageAndCollectivesPassAndNodesDescribeBoth()
    {
        // Arrange: the same program, its Linux build on one node and its Windows build on the other.
        await using var agents = await Agents.StartAsync(windows, windowsSlots: 2);
        var file = await WriteComputation("mixed", agents, $"""
              <ranks program="{Beside("Pmpi.TestRanks.dll")}" count="2" node="linux" args="domains"/>
              <ranks program="{windows.TestRanks}" count="2" node="windows" args="domains"/>
            """);

        // Act
        await using var routes = Pmpi("run", "--show-routes", file);
        int routesCode = await routes.WaitForExitAsync(Timeout);
        await using var run = Pmpi("run", "--master", agents.Linux, "--insecure", file);
        int code = await run.WaitForExitAsync(Timeout);
        await using var nodes = Pmpi("nodes", "--insecure", agents.Linux, agents.Windows);
        int nodesCode = await nodes.WaitForExitAsync(Timeout);

        // Assert: shared memory within each node, the network between them; every rank's checks passed.
        Assert.True(routesCode == 0, routes.Transcript);
        Assert.Contains("0 (linux) -> 1 (linux): shared memory", routes.Stdout);
        Assert.Contains("2 (windows) -> 3 (windows): shared memory", routes.Stdout);
        Assert.Contains("1 (linux) -> 2 (windows): direct", routes.Stdout);
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}\n{agents.Transcripts}");
        Assert.Contains("[0] ring=4 ssend=ok big=ok allreduce=10 gather=1,2,3,4", run.Stdout);
        Assert.Equal(4, run.Stdout.Count(line => line.Contains(" hello rank=", StringComparison.Ordinal)));
        // Each agent describes its own system: the Windows one through the Windows calls of its node information.
        Assert.True(nodesCode == 0, nodes.Transcript);
        Assert.Contains(nodes.Stdout, line => line.Contains("Microsoft Windows", StringComparison.Ordinal));
        Assert.Contains(nodes.Stdout, line => line.Contains(LinuxName(), StringComparison.Ordinal));
    }

    [WineFact]
    public async Task Run_MatMulWithACSharpMasterOnLinuxAndVisualBasicAndFSharpWorkersOnWindows_ProductIsVerified()
    {
        // Arrange: the example's C# master here; its Visual Basic and F# workers published for Windows.
        var visualBasic = WindowsBuild.WindowsPath(Path.Combine(await windows.PublishAsync("MatMulVisualBasicProject", "matmul-vb"), "MatMul.VisualBasic.exe"));
        var fsharp = WindowsBuild.WindowsPath(Path.Combine(await windows.PublishAsync("MatMulFSharpProject", "matmul-fs"), "MatMul.FSharp.exe"));
        await using var agents = await Agents.StartAsync(windows, windowsSlots: 4);
        var file = await WriteComputation("matmul", agents, $"""
              <ranks program="{Beside("MatMul.CSharp.dll")}" count="1" node="linux" args="480 240 100"/>
              <ranks program="{visualBasic}" count="2" node="windows"/>
              <ranks program="{fsharp}" count="2" node="windows"/>
            """);

        // Act
        await using var run = Pmpi("run", "--master", agents.Linux, "--insecure", file);
        int code = await run.WaitForExitAsync(TimeSpan.FromMinutes(3));

        // Assert: every worker reported in its language, and the master's check of the product against its own
        // sequential multiply passed (examples/MatMul.CSharp).
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}\n{agents.Transcripts}");
        Assert.Equal(["[0] worker 1: Visual Basic", "[0] worker 2: Visual Basic", "[0] worker 3: F#", "[0] worker 4: F#"],
            run.Stdout.Where(line => line.StartsWith("[0] worker ", StringComparison.Ordinal)));
        var summary = run.Stdout.Select(line => Summary().Match(line)).SingleOrDefault(match => match.Success);
        Assert.True(summary is not null, $"No result line in the output.\n{run.Transcript}");
        Assert.True(double.Parse(summary.Groups["error"].Value, CultureInfo.InvariantCulture) <= 1e-9, summary.Value);
    }

    [WineFact]
    public async Task Run_WindowsBuildStagedFromLinux_ItsRanksRunTheWindowsAgentsCopy()
    {
        // Arrange: the Windows build of the rank program, named by its path on this machine and staged; the Windows
        // agent keeps its store in the fixture's directory, where its ranks' paths can be told apart.
        var store = Path.Combine(windows.Root, "store");
        await using var agents = await Agents.StartAsync(windows, windowsSlots: 2, "--staging-dir", WindowsBuild.WindowsPath(store));
        var file = await WriteComputation("staged", agents, $"""
              <ranks program="{Beside("Pmpi.TestRanks.dll")}" count="2" node="linux" args="where"/>
              <ranks program="{windows.TestRanksOnLinux}" count="2" node="windows" args="where" stage="true"/>
            """);

        // Act
        await using var run = Pmpi("run", "--master", agents.Linux, "--insecure", file);
        int code = await run.WaitForExitAsync(Timeout);

        // Assert: the Linux ranks ran the program where it is; the Windows ranks their agent's copy, in that directory.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}\n{agents.Transcripts}");
        var where = run.Stdout.Where(line => line.Contains("] where: ", StringComparison.Ordinal)).ToDictionary(
            line => int.Parse(line[1..line.IndexOf(']', StringComparison.Ordinal)], CultureInfo.InvariantCulture), line => line);
        Assert.Equal([0, 1, 2, 3], where.Keys.Order());
        Assert.Contains($"program={AppContext.BaseDirectory} ", where[0], StringComparison.Ordinal);
        var copy = WindowsBuild.WindowsPath(Path.Combine(store, "programs")) + "\\";
        foreach (int rank in new[] { 2, 3 })
        {
            Assert.Contains($"program={copy}", where[rank], StringComparison.Ordinal);
            Assert.Contains($" cwd={copy}", where[rank], StringComparison.Ordinal);
        }
        Assert.EndsWith(" sum=10", where[3], StringComparison.Ordinal);
    }

    [WineFact]
    public async Task Run_PortableAssemblyOnAWindowsNodeWithoutDotnet_RefusedNamingWhatItNeeds()
    {
        // Arrange: the portable build of the rank program (the Linux one beside the tests, one IL assembly for both
        // systems), on both nodes; the Windows node, this Wine prefix, has no .NET runtime to run it with.
        await using var agents = await Agents.StartAsync(windows, windowsSlots: 2);
        var portable = Beside("Pmpi.TestRanks.dll");
        var file = await WriteComputation("portable", agents, $"""
              <ranks program="{portable}" count="2" node="linux"/>
              <ranks program="{WindowsBuild.WindowsPath(portable)}" count="2" node="windows"/>
            """);

        // Act
        await using var run = Pmpi("run", "--master", agents.Linux, "--insecure", file);
        int code = await run.WaitForExitAsync(Timeout);

        // Assert: the Windows agent refused the launch, saying what the node lacks and what would run there.
        Assert.True(code != 0, $"pmpi run exited with {code}.\n{run.Transcript}\n{agents.Transcripts}");
        Assert.True(run.Stderr.Any(line => line.Contains($"rank 2's program '{WindowsBuild.WindowsPath(portable)}' is a .NET assembly, which the dotnet host runs, and this machine has none", StringComparison.Ordinal)
            && line.Contains("install the .NET 10 runtime here, or run a self-contained or Native AOT build of the program", StringComparison.Ordinal)), run.Transcript);
    }

    /// <summary>A computation on the two agents' nodes: "linux" with 2 slots, "windows" with as many as its agent has.</summary>
    private async Task<string> WriteComputation(string name, Agents agents, string ranks)
    {
        var file = Path.Combine(windows.Root, $"{name}.xml");
        await File.WriteAllTextAsync(file, $"""
            <computation name="{name}" timeout="00:02:30" xmlns="urn:pmpi:computation:v1">
              <node name="linux" agent="{agents.Linux}" slots="2"/>
              <node name="windows" agent="{agents.Windows}" slots="{agents.WindowsSlots}"/>
            {ranks}
            </computation>
            """);
        return file;
    }

    /// <summary>`pmpi` of the Linux build beside the tests.</summary>
    private static ChildProcess Pmpi(params string[] arguments) => ChildProcess.Start(WindowsBuild.DotnetHost, [Beside("pmpi.dll"), .. arguments]);

    private static string Beside(string name) => Path.Combine(AppContext.BaseDirectory, name);

    private static string LinuxName() =>
        File.ReadLines("/etc/os-release").First(line => line.StartsWith("PRETTY_NAME=", StringComparison.Ordinal))["PRETTY_NAME=".Length..].Trim('"');

    [GeneratedRegex(@"^\[0\] C = A\(\d+x\d+\) x B\(\d+x\d+\) by a master in C# and 4 workers in \S+ s \(sequential \S+ s\), max abs error (?<error>\S+), sum of C \S+$")]
    private static partial Regex Summary();

    /// <summary>
    /// Two agents on loopback, in cleartext (Wine cannot load the cluster credential's keys: see docs/architecture.md,
    /// *Windows*): one of the Linux build, one of the Windows build under Wine.
    /// </summary>
    private sealed partial class Agents : IAsyncDisposable
    {
        private ChildProcess _linux = null!, _windows = null!;

        public string Linux { get; private set; } = "";
        public string Windows { get; private set; } = "";
        public int WindowsSlots { get; private set; }
        public string Transcripts => $"--- Linux agent ---\n{_linux.Transcript}\n--- Windows agent ---\n{_windows.Transcript}";

        public static async Task<Agents> StartAsync(WindowsBuild windows, int windowsSlots, params string[] windowsOptions)
        {
            var agents = new Agents { WindowsSlots = windowsSlots };
            agents._linux = Pmpi("agent", "--port", "0", "--slots", "2", "--insecure");
            agents._windows = windows.Start(["agent", "--port", "0", "--slots", $"{windowsSlots}", "--insecure", .. windowsOptions]);
            try
            {
                agents.Linux = await ListeningAddress(agents._linux);
                agents.Windows = await ListeningAddress(agents._windows);
                return agents;
            }
            catch
            {
                await agents.DisposeAsync();
                throw;
            }
        }

        public async ValueTask DisposeAsync()
        {
            await _linux.DisposeAsync();
            await _windows.DisposeAsync();
        }

        /// <summary>host:port from the agent's "pmpi agent listening on http://host:port/" line.</summary>
        private static async Task<string> ListeningAddress(ChildProcess agent)
        {
            var line = await agent.WaitForLineAsync(l => l.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), Timeout, "its listening line");
            return ListeningLine().Match(line).Groups[1].Value;
        }

        [GeneratedRegex(@"http://([^/]+)/")]
        private static partial Regex ListeningLine();
    }
}
