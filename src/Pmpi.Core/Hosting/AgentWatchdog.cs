using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Pmpi.Hosting;

/// <summary>
/// Ends a launched rank whose agent is gone. An agent kills its ranks when it stops or its master goes away, but one
/// killed outright (SIGKILL, a crash, `pmpi run` with its embedded agent killed) cannot: without this its ranks
/// would be orphans, blocked forever and holding the node's cores.
/// </summary>
/// <remarks>
/// On Linux a thread blocks in poll on a pidfd of the agent, which the kernel marks readable when the agent exits.
/// Elsewhere it waits through <see cref="Process"/>, which on Linux costs a rank's start several milliseconds more:
/// the class and its exit-waiting machinery load and compile for a process that is not this one's child.
/// </remarks>
internal static partial class AgentWatchdog
{
    /// <summary>The exit code of a rank that ended because its agent vanished (as if killed by SIGKILL: 128 + 9).</summary>
    public const int AgentGoneExitCode = 137;

    /// <summary>Watches the agent named by <paramref name="identity"/>, if it named one, on a background thread.</summary>
    public static void Start(RankIdentity identity)
    {
        if (identity.AgentProcessId is not { } agentProcessId) return;
        Action? waitForExit = OperatingSystem.IsLinux() ? WaitOnPidfd(agentProcessId) : null;
        if (waitForExit is null)
        {
            try
            {
                var agent = Process.GetProcessById(agentProcessId);
                waitForExit = agent.WaitForExit;
            }
            catch (ArgumentException)
            {
                waitForExit = () => { };
            }
        }
        new Thread(() =>
        {
            waitForExit();
            Console.Error.WriteLine($"Rank {identity.Rank} of job {identity.JobId}: its agent (process {agentProcessId}) is gone; the rank ends.");
            System.Environment.Exit(AgentGoneExitCode);
        })
        { IsBackground = true, Name = "PMPI agent watchdog" }.Start();
    }

    /// <summary>A wait for the agent's exit on a pidfd; null where the kernel has none (before Linux 5.3).</summary>
    private static Action? WaitOnPidfd(int processId)
    {
        int pidfd = (int)PidfdOpen(PidfdOpenSyscall, processId, 0);
        if (pidfd < 0) return Marshal.GetLastPInvokeError() == NoSuchProcess ? () => { } : null;
        return () =>
        {
            var watched = new PollDescriptor { Descriptor = pidfd, Events = PollIn };
            while (Poll(ref watched, 1, -1) < 0 && Marshal.GetLastPInvokeError() == Interrupted) { }
        };
    }

    private const long PidfdOpenSyscall = 434; // the same number on every Linux architecture
    private const int NoSuchProcess = 3;       // ESRCH
    private const int Interrupted = 4;         // EINTR
    private const short PollIn = 1;            // POLLIN

    [StructLayout(LayoutKind.Sequential)]
    private struct PollDescriptor
    {
        public int Descriptor;
        public short Events;
        public short ReturnedEvents;
    }

    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static partial long PidfdOpen(long number, int processId, uint flags);

    [LibraryImport("libc", EntryPoint = "poll", SetLastError = true)]
    private static partial int Poll(ref PollDescriptor descriptors, nuint count, int timeout);
}
