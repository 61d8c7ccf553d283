namespace Pmpi.Tests.Shared;

/// <summary>Sends POSIX signals the way an operator or a service manager does (linked from tests/Shared).</summary>
internal static class Signals
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>Sends SIGTERM to <paramref name="processId"/> with kill(1).</summary>
    public static async Task TerminateAsync(int processId)
    {
        await using var kill = ChildProcess.Start("kill", ["-TERM", $"{processId}"]);
        int code = await kill.WaitForExitAsync(Timeout);
        Assert.True(code == 0, $"kill -TERM {processId} failed.\n{kill.Transcript}");
    }

    /// <summary>Sends <paramref name="signal"/> (e.g. STOP, CONT) to <paramref name="processId"/> with kill(1).</summary>
    public static async Task SendAsync(string signal, int processId)
    {
        await using var kill = ChildProcess.Start("kill", [$"-{signal}", $"{processId}"]);
        int code = await kill.WaitForExitAsync(Timeout);
        Assert.True(code == 0, $"kill -{signal} {processId} failed.\n{kill.Transcript}");
    }
}
