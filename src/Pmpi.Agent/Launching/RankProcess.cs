using System.Globalization;
using System.Diagnostics;
using System.IO.Pipes;
using System.Security.Cryptography;
using Pmpi.Agent.Launching.Internal;
using Pmpi.Rpc;

namespace Pmpi.Agent.Launching;

/// <summary>What to start for one rank: the program (a .dll runs under the dotnet host), its arguments and environment.</summary>
/// <param name="Rank">World rank, used to tag output.</param>
/// <param name="Program">Full path of the program: a managed .dll, or any executable.</param>
/// <param name="Arguments">Command-line arguments.</param>
/// <param name="WorkingDirectory">The process's working directory.</param>
/// <param name="Environment">Variables added to the agent's own environment (the rank's identity among them).</param>
public sealed record RankStart(int Rank, string Program, IReadOnlyList<string> Arguments, string WorkingDirectory,
    IReadOnlyDictionary<string, string> Environment)
{
    /// <summary>
    /// How long the rank's runtime may fall silent, once it has sent its first heartbeat, before
    /// <see cref="RankProcess.Unresponsive"/> completes. Defaults to null: no heartbeat pipe is handed down.
    /// </summary>
    public TimeSpan? HeartbeatTimeout { get; init; }

    /// <summary>
    /// What the rank reads as its standard input, passed on as it arrives and closed at its end. Defaults to null:
    /// the rank's input is empty (its pipe is closed at once).
    /// </summary>
    public Stream? Input { get; init; }
}

/// <summary>Which stream a line of rank output came from.</summary>
public enum OutputStream
{
    /// <summary>Standard output.</summary>
    Stdout,
    /// <summary>Standard error.</summary>
    Stderr,
}

/// <summary>A line of rank output, or a piece of a line longer than <see cref="RankProcess.MaxLineLength"/>.</summary>
/// <param name="Stream">The stream it came from.</param>
/// <param name="Text">The text, without its newline.</param>
/// <param name="Continues">The line goes on in the next piece of the same stream.</param>
public readonly record struct OutputPiece(OutputStream Stream, string Text, bool Continues);

/// <summary>
/// One running rank process. Output is forwarded line by line as it comes, a line longer than
/// <see cref="MaxLineLength"/> in pieces; the pipe is read only as fast as the consumer takes the pieces, so a rank
/// that writes faster than its output travels waits in its write instead of growing the agent's memory.
/// <see cref="Exited"/> completes with the exit code once the process has ended and both output streams are drained,
/// so no line arrives after the exit. The rank runs in its own session, cgroup or job object
/// (<see cref="RankContainment"/>): killing it, disposing it, or its own exit ends everything it started.
/// </summary>
public sealed class RankProcess : IDisposable
{
    /// <summary>The longest piece of output forwarded at once: 65,536 characters; a longer line arrives in pieces.</summary>
    public const int MaxLineLength = 64 * 1024;

    private static readonly TimeSpan HeartbeatCheck = TimeSpan.FromSeconds(1);

    /// <summary>How long output may still come after the rank exited, from a descendant that escaped its containment.</summary>
    private static readonly TimeSpan OutputAfterExit = TimeSpan.FromSeconds(2);

    // Held from creating a heartbeat pipe until the rank has started and the agent closed its copy of the rank's end:
    // a rank started meanwhile by another launch would inherit that end and keep it open.
    private static readonly Lock SpawnLock = new();

    private readonly Process _process;
    private readonly RankContainment _containment;
    private readonly AnonymousPipeServerStream? _heartbeat;
    private readonly Timer? _heartbeatCheck;
    private readonly TaskCompletionSource<TimeSpan> _unresponsive = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<bool> _joined = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _heartbeatEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _lastHeartbeat;
    private volatile bool _suspended;
    private bool _reportsFinalize;
    private bool _finalized;

    private RankProcess(Process process, RankContainment containment, AnonymousPipeServerStream? heartbeat, TimeSpan? heartbeatTimeout, Task stdout, Task stderr)
    {
        _process = process;
        _containment = containment;
        _heartbeat = heartbeat;
        Exited = WaitForExit(stdout, stderr);
        if (heartbeat is null || heartbeatTimeout is not { } timeout)
        {
            _joined.TrySetResult(false);
            _heartbeatEnded.TrySetResult();
            return;
        }
        new Thread(() => ListenForHeartbeats(heartbeat)) { IsBackground = true, Name = $"PMPI heartbeat of process {process.Id}" }.Start();
        _heartbeatCheck = new Timer(_ => CheckHeartbeat(timeout), null, HeartbeatCheck, HeartbeatCheck);
    }

    /// <summary>The operating system's process id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>Completes with the exit code after the last output line was delivered.</summary>
    public Task<int> Exited { get; }

    /// <summary>
    /// Completes, with how long it was silent, when the rank's runtime sent heartbeats and then none for longer than
    /// <see cref="RankStart.HeartbeatTimeout"/> while the process still ran: it is stopped or frozen. Never completes
    /// for a rank started without a heartbeat timeout.
    /// </summary>
    public Task<TimeSpan> Unresponsive => _unresponsive.Task;

    /// <summary>
    /// Completes true when the rank's runtime reported on its heartbeat pipe that it joined its job (a rank given its
    /// table at launch, which registers through its agent), false when the pipe ended without that (or there is none).
    /// The pipe is read to its end once the rank exits, so a rank that joined is known to have by then.
    /// </summary>
    public Task<bool> Joined => _joined.Task;

    /// <summary>
    /// Whether the rank's runtime said on its heartbeat pipe that it reports finalizing PMPI (one older than that, or
    /// a rank without a heartbeat pipe, does not). Known, as <see cref="Finalized"/>, once <see cref="Exited"/>
    /// completed: the pipe is read to its end first.
    /// </summary>
    public bool ReportsFinalize => Volatile.Read(ref _reportsFinalize);

    /// <summary>Whether the rank's runtime reported on its heartbeat pipe that it finalized PMPI.</summary>
    public bool Finalized => Volatile.Read(ref _finalized);

    /// <summary>
    /// Why this machine cannot start the rank, or null: a program given by its full path, or the working directory,
    /// is not here, or the program is a .NET assembly and no dotnet host is. A program named without a path is left
    /// to the search path.
    /// </summary>
    public static string? WhyNotStartable(int rank, string program, string workingDirectory)
    {
        if (Path.IsPathFullyQualified(program) && !File.Exists(program)) return $"rank {rank}'s program '{program}' is not on this machine";
        if (!Directory.Exists(workingDirectory)) return $"rank {rank}'s working directory '{workingDirectory}' is not on this machine";
        if (IsAssembly(program) && DotnetHost is null)
        {
            return $"rank {rank}'s program '{program}' is a .NET assembly, which the dotnet host runs, and this machine has none (no dotnet on PATH, "
                + $"no DOTNET_HOST_PATH): install the .NET {System.Environment.Version.Major} runtime here, or run a self-contained or Native AOT build of the program";
        }
        return null;
    }

    private static bool IsAssembly(string program) => program.EndsWith(".dll", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Starts the rank; <paramref name="onOutput"/> receives every line (or piece of a long line) in order per stream,
    /// and the stream is not read again until the returned task completes.
    /// </summary>
    /// <exception cref="InvalidOperationException">The program could not be started; the message says which and why.</exception>
    public static RankProcess Start(RankStart start, Func<OutputPiece, ValueTask> onOutput)
    {
        ArgumentNullException.ThrowIfNull(start);
        ArgumentNullException.ThrowIfNull(onOutput);
        var info = new ProcessStartInfo
        {
            WorkingDirectory = start.WorkingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        bool managed = IsAssembly(start.Program);
        // Checked here because a wrapper such as setsid (or the dotnet host) would start, and only then fail to run the program.
        if (WhyNotStartable(start.Rank, start.Program, start.WorkingDirectory) is { } reason) throw new InvalidOperationException(reason);
        var containment = RankContainment.Create($"pmpi-{System.Environment.ProcessId}-rank{start.Rank}-{Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(4))}");
        var executable = managed ? DotnetHost! : start.Program;
        (info.FileName, var prefix) = containment.Wrap(executable);
        foreach (var argument in prefix) info.ArgumentList.Add(argument);
        if (managed) info.ArgumentList.Add(start.Program);
        foreach (var argument in start.Arguments) info.ArgumentList.Add(argument);
        foreach (var (name, value) in start.Environment) info.Environment[name] = value;

        var process = new Process { StartInfo = info, EnableRaisingEvents = true };
        AnonymousPipeServerStream? heartbeat = null;
        try
        {
            lock (SpawnLock)
            {
                if (start.HeartbeatTimeout is not null)
                {
                    heartbeat = new AnonymousPipeServerStream(PipeDirection.In, HandleInheritability.Inheritable);
                    info.Environment[RankEnvironment.Heartbeat] = heartbeat.GetClientHandleAsString();
                    info.Environment[RankEnvironment.HeartbeatTimeout] = ((int)Math.Ceiling(start.HeartbeatTimeout.Value.TotalSeconds)).ToString(CultureInfo.InvariantCulture);
                }
                process.Start();
                heartbeat?.DisposeLocalCopyOfClientHandle();
            }
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException or IOException)
        {
            throw Abandoned($"cannot start '{executable}'", e);
        }
        try
        {
            try
            {
                containment.Adopt(process);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // The rank exited already (nothing left to contain), or the cgroup refused it: its session still holds it.
            }
            // Without input the pipe closes at once: an open one would keep a reader waiting forever.
            if (start.Input is { } input) PassInputOnThread(input, process.StandardInput.BaseStream, $"PMPI stdin of process {process.Id}");
            else process.StandardInput.Close();
            var stdout = ForwardOnThread(process.StandardOutput, OutputStream.Stdout, onOutput, $"PMPI stdout of process {process.Id}");
            var stderr = ForwardOnThread(process.StandardError, OutputStream.Stderr, onOutput, $"PMPI stderr of process {process.Id}");
            return new RankProcess(process, containment, heartbeat, start.HeartbeatTimeout, stdout, stderr);
        }
        catch (InvalidOperationException e)
        {
            // Started, but not as a process this one can watch (Wine, given a Linux executable, starts it outside Windows).
            throw Abandoned($"'{executable}' started, but not as a process this agent can watch", e);
        }

        // Releases what the start took; the error to throw says what went wrong.
        InvalidOperationException Abandoned(string what, Exception e)
        {
            heartbeat?.Dispose();
            process.Dispose();
            containment.Dispose();
            return new InvalidOperationException($"Rank {start.Rank}: {what}: {e.Message}", e);
        }
    }

    /// <summary>Whether <see cref="Kill"/> found the process still running: its exit code is the kill's, not the program's.</summary>
    public bool WasKilled { get; private set; }

    /// <summary>Kills the process and its descendants; harmless if it already ended.</summary>
    public void Kill()
    {
        try
        {
            if (!_process.HasExited) WasKilled = true;
        }
        catch (InvalidOperationException)
        {
            // Already exited and disposed.
            return;
        }
        _containment.Kill(_process);
    }

    /// <summary>
    /// Stops the rank where it is until <see cref="Continue"/> (`pmpi run`'s Ctrl-Z; Linux): its heartbeats' silence
    /// meanwhile is not taken for a hang.
    /// </summary>
    public void Suspend()
    {
        _suspended = true;
        _containment.Suspend(true);
    }

    /// <summary>Lets a rank <see cref="Suspend"/> stopped go on, its heartbeats' silence counted from now.</summary>
    public void Continue()
    {
        if (Volatile.Read(ref _lastHeartbeat) != 0) Volatile.Write(ref _lastHeartbeat, Stopwatch.GetTimestamp());
        _containment.Suspend(false);
        _suspended = false;
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        Kill();
        _heartbeatCheck?.Dispose();
        _heartbeat?.Dispose();
        _process.Dispose();
        _containment.Dispose();
    }

    /// <summary>
    /// Runs <see cref="Forward"/> on a thread of its own; the task completes when the stream ends. On Windows a rank's
    /// pipes are synchronous handles, whose asynchronous reads each hold a thread-pool thread until output comes: an
    /// agent running many ranks starved its pool that way (measured under Wine: of 8 ranks, only 2 had their output
    /// forwarded after 20 s, and the agent's heartbeats stalled). A thread per stream costs the same everywhere.
    /// </summary>
    private static Task ForwardOnThread(StreamReader reader, OutputStream stream, Func<OutputPiece, ValueTask> onOutput, string name)
    {
        var forwarded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        new Thread(() =>
        {
            try
            {
                Forward(reader, stream, onOutput);
                forwarded.TrySetResult();
            }
            catch (Exception e)
            {
                forwarded.TrySetException(e);
            }
        })
        { IsBackground = true, Name = name }.Start();
        return forwarded.Task;
    }

    /// <summary>
    /// Copies <paramref name="input"/> to the rank's standard input as it arrives, on a thread of its own (a read may
    /// wait on a terminal for as long as the rank runs), and closes the rank's input at its end. Stops when the rank
    /// no longer reads (it closed its input, or exited).
    /// </summary>
    private static void PassInputOnThread(Stream input, Stream rank, string name) => new Thread(() =>
    {
        var buffer = new byte[16 * 1024];
        try
        {
            int read;
            while ((read = input.Read(buffer)) > 0)
            {
                rank.Write(buffer, 0, read);
                rank.Flush();
            }
            rank.Dispose();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            // The rank is gone or stopped reading; what it did not take is not wanted.
        }
    })
    { IsBackground = true, Name = name }.Start();

    /// <summary>
    /// Forwards a stream line by line, cutting lines at <see cref="MaxLineLength"/>, so neither a flood of lines nor
    /// one endless line makes the agent hold more than a piece per stream: each piece waits until
    /// <paramref name="onOutput"/> took it before the pipe is read again.
    /// </summary>
    private static void Forward(StreamReader reader, OutputStream stream, Func<OutputPiece, ValueTask> onOutput)
    {
        var read = new char[4096];
        var line = new char[MaxLineLength];
        int length = 0, count;
        bool continuing = false; // a piece of the current line went out already
        while ((count = reader.Read(read)) > 0)
        {
            int at = 0;
            while (at < count)
            {
                int newline = Array.IndexOf(read, '\n', at, count - at);
                int end = newline < 0 ? count : newline;
                while (at < end)
                {
                    int take = Math.Min(end - at, MaxLineLength - length);
                    Array.Copy(read, at, line, length, take);
                    length += take;
                    at += take;
                    if (length == MaxLineLength)
                    {
                        // A piece never ends between the halves of a surrogate pair: the high half starts the next one.
                        int piece = char.IsHighSurrogate(line[length - 1]) ? length - 1 : length;
                        Deliver(onOutput(new(stream, new string(line, 0, piece), Continues: true)));
                        continuing = true;
                        length -= piece;
                        if (length > 0) line[0] = line[piece];
                    }
                }
                if (newline < 0) break;
                int text = length > 0 && line[length - 1] == '\r' ? length - 1 : length;
                Deliver(onOutput(new(stream, new string(line, 0, text), Continues: false)));
                continuing = false;
                length = 0;
                at = newline + 1;
            }
        }
        // A last line without newline, or the end of one whose pieces said it goes on.
        if (length > 0 || continuing) Deliver(onOutput(new(stream, new string(line, 0, length), Continues: false)));
    }

    /// <summary>Waits, on the forwarding thread, until the consumer took a piece.</summary>
    private static void Deliver(ValueTask taken)
    {
        if (taken.IsCompletedSuccessfully) taken.GetAwaiter().GetResult();
        else taken.AsTask().GetAwaiter().GetResult();
    }

    private void ListenForHeartbeats(AnonymousPipeServerStream heartbeat)
    {
        var beats = new byte[64];
        try
        {
            int read;
            while ((read = heartbeat.Read(beats)) > 0)
            {
                Volatile.Write(ref _lastHeartbeat, Stopwatch.GetTimestamp());
                if (beats.AsSpan(0, read).Contains(RankEnvironment.JoinedBeat)) _joined.TrySetResult(true);
                if (beats.AsSpan(0, read).Contains(RankEnvironment.ReportsFinalizeBeat)) Volatile.Write(ref _reportsFinalize, true);
                if (beats.AsSpan(0, read).Contains(RankEnvironment.FinalizedBeat)) Volatile.Write(ref _finalized, true);
            }
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            // The rank ended or the process object was disposed: nothing left to listen to.
        }
        _joined.TrySetResult(false);
        _heartbeatEnded.TrySetResult();
    }

    private void CheckHeartbeat(TimeSpan timeout)
    {
        long last = Volatile.Read(ref _lastHeartbeat);
        // Silence counts only once the runtime has started beating: startup is the registration timeout's concern.
        if (last == 0 || _suspended || Exited.IsCompleted) return;
        var silence = Stopwatch.GetElapsedTime(last);
        if (silence > timeout && !_process.HasExited) _unresponsive.TrySetResult(silence);
    }

    private async Task<int> WaitForExit(Task stdout, Task stderr)
    {
        await _process.WaitForExitAsync().ConfigureAwait(false);
        // A rank's descendants live no longer than the rank: they would hold its node, and its output pipes open.
        _containment.Kill(_process);
        try
        {
            await Task.WhenAll(stdout, stderr, _heartbeatEnded.Task).WaitAsync(OutputAfterExit).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // A descendant that escaped the containment still holds the pipes: the rank's exit does not wait for it.
        }
        return _process.ExitCode;
    }

    /// <summary>The dotnet host that runs this agent, so ranks use the same runtime; else DOTNET_HOST_PATH's, else dotnet on PATH; null when there is none.</summary>
    private static string? DotnetHost
    {
        get
        {
            var current = System.Environment.ProcessPath;
            if (current is not null && Path.GetFileNameWithoutExtension(current).Equals("dotnet", StringComparison.OrdinalIgnoreCase)) return current;
            if (System.Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } configured && File.Exists(configured)) return configured;
            return SearchPath.Find("dotnet");
        }
    }
}
