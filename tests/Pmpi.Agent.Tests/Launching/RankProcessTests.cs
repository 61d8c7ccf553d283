using System.Collections.Concurrent;
using System.Diagnostics;
using Pmpi.Agent.Launching;
using Pmpi.Agent.Tests.NodeInfo;

namespace Pmpi.Agent.Tests.Launching;

public class RankProcessTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static RankStart Shell(string script, IReadOnlyDictionary<string, string>? environment = null) =>
        new(0, "/bin/sh", ["-c", script], Path.GetTempPath(), environment ?? new Dictionary<string, string>());

    [LinuxFact]
    public async Task Start_ProgramWritesBothStreams_ForwardsEveryLineBeforeExit()
    {
        var lines = new ConcurrentQueue<(OutputStream, string)>();
        using var rank = RankProcess.Start(Shell("echo one; echo two >&2; echo \"$PMPI_TEST\"; exit 3", new Dictionary<string, string> { ["PMPI_TEST"] = "three" }),
            (stream, line) => lines.Enqueue((stream, line)));

        int code = await rank.Exited.WaitAsync(Timeout);

        Assert.Equal(3, code);
        Assert.Contains((OutputStream.Stdout, "one"), lines);
        Assert.Contains((OutputStream.Stderr, "two"), lines);
        Assert.Contains((OutputStream.Stdout, "three"), lines);
    }

    [LinuxFact]
    public async Task Kill_ProcessWithChildren_LeavesNoDescendant()
    {
        var lines = new ConcurrentQueue<string>();
        using var rank = RankProcess.Start(Shell("sleep 60 & echo $!; wait"), (_, line) => lines.Enqueue(line));
        var deadline = Stopwatch.StartNew();
        while (lines.IsEmpty && deadline.Elapsed < Timeout) await Task.Delay(20);
        int child = int.Parse(lines.Single(), System.Globalization.CultureInfo.InvariantCulture);

        rank.Kill();
        await rank.Exited.WaitAsync(Timeout);

        while (Directory.Exists($"/proc/{child}") && deadline.Elapsed < Timeout) await Task.Delay(20);
        Assert.False(Directory.Exists($"/proc/{child}"), $"child process {child} outlived the kill");
    }

    [Fact]
    public void Start_MissingProgram_ThrowsNamingIt()
    {
        var start = new RankStart(4, "/nonexistent/rank-program", [], Path.GetTempPath(), new Dictionary<string, string>());

        var error = Assert.Throws<InvalidOperationException>(() => RankProcess.Start(start, (_, _) => { }));

        Assert.Contains("Rank 4", error.Message);
        Assert.Contains("/nonexistent/rank-program", error.Message);
    }
}
