using System.Diagnostics;

namespace Pmpi.Hosting;

/// <summary>
/// Ends a launched rank whose agent is gone. An agent kills its ranks when it stops or its master goes away, but one
/// killed outright (SIGKILL, a crash, `pmpi run` with its embedded agent killed) cannot: without this its ranks
/// would be orphans, blocked forever and holding the node's cores.
/// </summary>
internal static class AgentWatchdog
{
    /// <summary>The exit code of a rank that ended because its agent vanished (as if killed by SIGKILL: 128 + 9).</summary>
    public const int AgentGoneExitCode = 137;

    /// <summary>Watches the agent named by <paramref name="identity"/>, if it named one, on a background thread.</summary>
    public static void Start(RankIdentity identity)
    {
        if (identity.AgentProcessId is not { } agentProcessId) return;
        Process agent;
        try
        {
            agent = Process.GetProcessById(agentProcessId);
        }
        catch (ArgumentException)
        {
            Exit(identity, agentProcessId);
            return;
        }
        new Thread(() =>
        {
            agent.WaitForExit();
            Exit(identity, agentProcessId);
        })
        { IsBackground = true, Name = "PMPI agent watchdog" }.Start();
    }

    private static void Exit(RankIdentity identity, int agentProcessId)
    {
        Console.Error.WriteLine($"Rank {identity.Rank} of job {identity.JobId}: its agent (process {agentProcessId}) is gone; the rank ends.");
        System.Environment.Exit(AgentGoneExitCode);
    }
}
