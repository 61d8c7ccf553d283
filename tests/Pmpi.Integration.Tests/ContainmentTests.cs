using System.Diagnostics;
using System.Globalization;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>Killing a job kills every process its ranks started, even one that left the rank's session and tree.</summary>
public sealed class ContainmentTests
{
    [CgroupFact]
    public async Task Run_KilledWhileARankHasADetachedGrandchild_GrandchildIsGone()
    {
        // Arrange: the rank starts a grandchild that calls setsid and is re-parented away from the rank.
        using var scratch = new ScratchDirectory();
        var pidFile = Path.Combine(scratch.Path, "grandchild.pid");
        await using var run = PmpiCli.Start(["run", "-n", "1", PmpiCli.TestRanksDll, "grandchild", pidFile]);
        int grandchild = 0;
        try
        {
            var line = await run.WaitForLineAsync(l => l.StartsWith("[0] grandchild pid=", StringComparison.Ordinal), PmpiCli.Timeout, "the grandchild's pid");
            grandchild = int.Parse(line["[0] grandchild pid=".Length..], CultureInfo.InvariantCulture);
            Assert.True(IsAlive(grandchild), $"The grandchild {grandchild} is not running.\n{run.Transcript}");
            Assert.NotEqual(Sid(grandchild), Sid(RankHello.All(run.Stdout).Single().ProcessId));

            // Act: SIGTERM aborts the job, and the agent kills its rank.
            await Signals.TerminateAsync(run.Id);
            int code = await run.WaitForExitAsync(PmpiCli.Timeout);
            var clock = Stopwatch.StartNew();
            while (IsAlive(grandchild) && clock.Elapsed < TimeSpan.FromSeconds(10)) await Task.Delay(100);

            // Assert
            Assert.True(code == 143, $"pmpi run exited with {code}.\n{run.Transcript}");
            Assert.False(IsAlive(grandchild), $"The grandchild {grandchild} outlived the job.\n{run.Transcript}");
        }
        finally
        {
            if (grandchild > 0 && IsAlive(grandchild)) Process.GetProcessById(grandchild).Kill();
            var hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    /// <summary>Running and not a zombie waiting to be reaped.</summary>
    private static bool IsAlive(int processId)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{processId}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..][0] != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>The session id of a process (field 6 of /proc/PID/stat).</summary>
    private static string Sid(int processId)
    {
        var stat = File.ReadAllText($"/proc/{processId}/stat");
        return stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[3];
    }
}
