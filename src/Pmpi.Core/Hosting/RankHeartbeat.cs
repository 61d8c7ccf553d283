using System.Globalization;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Pmpi.Hosting;

/// <summary>
/// Tells the agent that this rank is alive: a background thread of the runtime writes one byte a second to the pipe
/// the agent handed down (<see cref="Rpc.RankEnvironment.Heartbeat"/>). The user's code never has to answer, so a
/// long compute phase cannot look like a hang; a stopped (SIGSTOP) or frozen process falls silent, and its agent
/// reports it after its heartbeat timeout. The other way round, on Linux, beats the agent leaves unread pile up in the
/// pipe: a rank whose agent has read none for its heartbeat timeout (a stopped or frozen agent, which can neither
/// report the rank nor kill it when its job fails) ends itself, as <see cref="AgentWatchdog"/> ends one whose agent exited.
/// </summary>
internal static partial class RankHeartbeat
{
    /// <summary>How often the runtime beats: well inside any heartbeat timeout an agent is configured with.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private static readonly Lock s_lock = new();
    private static FileStream? s_pipe;
    private static int s_descriptor;

    /// <summary>Starts beating on the pipe <paramref name="identity"/> names, if it names one.</summary>
    public static void Start(RankIdentity identity)
    {
        if (identity.HeartbeatHandle is not { } handle) return;
        // A plain file stream over the inherited handle: System.IO.Pipes' stream does its I/O through a socket on Unix,
        // whose engine costs a rank's start several milliseconds; one unbuffered byte a second needs none of it.
        nint descriptor = nint.Parse(handle, NumberStyles.None, CultureInfo.InvariantCulture);
        FileStream pipe;
        try
        {
            pipe = new FileStream(new SafeFileHandle(descriptor, ownsHandle: true), FileAccess.Write, bufferSize: 0);
        }
        catch (Exception e) when (e is IOException or ArgumentException or UnauthorizedAccessException)
        {
            // Without its heartbeat the agent reports this rank frozen: say why here, where the cause is visible.
            Console.Error.WriteLine($"Rank {identity.Rank} of job {identity.JobId}: cannot open the heartbeat pipe {handle}: {e.Message}");
            return;
        }
        // Processes this rank starts must not inherit the pipe: one that outlived the rank would hold it open.
        if (!OperatingSystem.IsWindows()) _ = FileControl((int)descriptor, SetFileDescriptorFlags, CloseOnExec);
        lock (s_lock)
        {
            s_pipe = pipe;
            s_descriptor = (int)descriptor;
        }
        Write(Rpc.RankEnvironment.ReportsFinalizeBeat);
        // Beats pile up one a second, so the pipe holding more than the timeout's seconds of them says the agent stopped reading.
        int? unreadLimit = OperatingSystem.IsLinux() && identity.HeartbeatTimeout is { } timeout ? (int)Math.Ceiling(timeout.TotalSeconds) + 1 : null;
        new Thread(() => Beat(identity, unreadLimit)) { IsBackground = true, Name = "PMPI heartbeat" }.Start();
    }

    /// <summary>
    /// Tells the agent that this rank joined its job: how a rank given its table at launch registers (the agent tells
    /// the master). False when there is no pipe to tell it on.
    /// </summary>
    public static bool ReportJoined() => Write(Rpc.RankEnvironment.JoinedBeat);

    /// <summary>Tells the agent that this rank finalized PMPI, so its exit ends nothing a peer waits for.</summary>
    public static void ReportFinalized() => Write(Rpc.RankEnvironment.FinalizedBeat);

    private static void Beat(RankIdentity identity, int? unreadLimit)
    {
        while (Write(Rpc.RankEnvironment.Beat))
        {
            if (unreadLimit is { } limit && Unread() > limit)
            {
                Console.Error.WriteLine($"Rank {identity.Rank} of job {identity.JobId}: its agent (process {identity.AgentProcessId}) has read none of its heartbeats for {limit - 1} s: it is stopped or frozen; the rank ends.");
                System.Environment.Exit(AgentWatchdog.AgentGoneExitCode);
            }
            Thread.Sleep(Interval);
        }
    }

    /// <summary>How many bytes written to the pipe its reader has not read yet (FIONREAD works on either end of a Linux pipe).</summary>
    private static int Unread()
    {
        int unread = 0;
        lock (s_lock) return IoControl(s_descriptor, BytesUnread, ref unread) == 0 ? unread : 0;
    }

    private static bool Write(byte value)
    {
        lock (s_lock)
        {
            try
            {
                s_pipe?.Write([value]);
                return s_pipe is not null;
            }
            catch (IOException)
            {
                // The agent closed its end: it is gone, and the agent watchdog ends this rank.
                return false;
            }
        }
    }

    private const int SetFileDescriptorFlags = 2; // F_SETFD
    private const int CloseOnExec = 1;            // FD_CLOEXEC

    private const nuint BytesUnread = 0x541B; // FIONREAD on Linux

    [LibraryImport("libc", EntryPoint = "ioctl")]
    private static partial int IoControl(int descriptor, nuint request, ref int value);

    [LibraryImport("libc", EntryPoint = "fcntl")]
    private static partial int FileControl(int descriptor, int command, int flags);
}
