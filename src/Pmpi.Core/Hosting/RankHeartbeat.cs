using System.Globalization;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Pmpi.Hosting;

/// <summary>
/// Tells the agent that this rank is alive: a background thread of the runtime writes one byte a second to the pipe
/// the agent handed down (<see cref="Rpc.RankEnvironment.Heartbeat"/>). The user's code never has to answer, so a
/// long compute phase cannot look like a hang; a stopped (SIGSTOP) or frozen process falls silent, and its agent
/// reports it after its heartbeat timeout.
/// </summary>
internal static partial class RankHeartbeat
{
    /// <summary>How often the runtime beats: well inside any heartbeat timeout an agent is configured with.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private static readonly Lock s_lock = new();
    private static FileStream? s_pipe;

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
        lock (s_lock) s_pipe = pipe;
        Write(Rpc.RankEnvironment.ReportsFinalizeBeat);
        new Thread(Beat) { IsBackground = true, Name = "PMPI heartbeat" }.Start();
    }

    /// <summary>
    /// Tells the agent that this rank joined its job: how a rank given its table at launch registers (the agent tells
    /// the master). False when there is no pipe to tell it on.
    /// </summary>
    public static bool ReportJoined() => Write(Rpc.RankEnvironment.JoinedBeat);

    /// <summary>Tells the agent that this rank finalized PMPI, so its exit ends nothing a peer waits for.</summary>
    public static void ReportFinalized() => Write(Rpc.RankEnvironment.FinalizedBeat);

    private static void Beat()
    {
        while (Write(Rpc.RankEnvironment.Beat)) Thread.Sleep(Interval);
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

    [LibraryImport("libc", EntryPoint = "fcntl")]
    private static partial int FileControl(int descriptor, int command, int flags);
}
