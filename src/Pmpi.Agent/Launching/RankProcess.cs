using System.Diagnostics;

namespace Pmpi.Agent.Launching;

/// <summary>What to start for one rank: the program (a .dll runs under the dotnet host), its arguments and environment.</summary>
/// <param name="Rank">World rank, used to tag output.</param>
/// <param name="Program">Full path of the program: a managed .dll, or any executable.</param>
/// <param name="Arguments">Command-line arguments.</param>
/// <param name="WorkingDirectory">The process's working directory.</param>
/// <param name="Environment">Variables added to the agent's own environment (the rank's identity among them).</param>
public sealed record RankStart(int Rank, string Program, IReadOnlyList<string> Arguments, string WorkingDirectory,
    IReadOnlyDictionary<string, string> Environment);

/// <summary>Which stream a line of rank output came from.</summary>
public enum OutputStream
{
    /// <summary>Standard output.</summary>
    Stdout,
    /// <summary>Standard error.</summary>
    Stderr,
}

/// <summary>
/// One running rank process. Output is forwarded line by line as it comes; <see cref="Exited"/> completes with the
/// exit code once the process has ended and both output streams are drained, so no line arrives after the exit.
/// Disposing kills the process and everything it started.
/// </summary>
public sealed class RankProcess : IDisposable
{
    private readonly Process _process;

    private RankProcess(Process process, Task<int> exited)
    {
        _process = process;
        Exited = exited;
    }

    /// <summary>The operating system's process id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>Completes with the exit code after the last output line was delivered.</summary>
    public Task<int> Exited { get; }

    /// <summary>Starts the rank; <paramref name="onLine"/> is called for every output line, from pool threads.</summary>
    /// <exception cref="InvalidOperationException">The program could not be started; the message says which and why.</exception>
    public static RankProcess Start(RankStart start, Action<OutputStream, string> onLine)
    {
        ArgumentNullException.ThrowIfNull(start);
        ArgumentNullException.ThrowIfNull(onLine);
        var info = new ProcessStartInfo
        {
            WorkingDirectory = start.WorkingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        if (start.Program.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
        {
            info.FileName = DotnetHost;
            info.ArgumentList.Add(start.Program);
        }
        else info.FileName = start.Program;
        foreach (var argument in start.Arguments) info.ArgumentList.Add(argument);
        foreach (var (name, value) in start.Environment) info.Environment[name] = value;

        var process = new Process { StartInfo = info, EnableRaisingEvents = true };
        var stdoutDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var stderrDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        process.OutputDataReceived += (_, e) => Forward(e.Data, OutputStream.Stdout, stdoutDone);
        process.ErrorDataReceived += (_, e) => Forward(e.Data, OutputStream.Stderr, stderrDone);
        try
        {
            process.Start();
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            process.Dispose();
            throw new InvalidOperationException($"Rank {start.Rank}: cannot start '{info.FileName}': {e.Message}", e);
        }
        process.StandardInput.Close(); // ranks read no input; an open pipe would keep a reader waiting forever
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return new RankProcess(process, WaitForExit(process, stdoutDone.Task, stderrDone.Task));

        void Forward(string? line, OutputStream stream, TaskCompletionSource done)
        {
            if (line is null) done.TrySetResult();
            else onLine(stream, line);
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
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // Already exited.
        }
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        Kill();
        _process.Dispose();
    }

    private static async Task<int> WaitForExit(Process process, Task stdout, Task stderr)
    {
        await process.WaitForExitAsync().ConfigureAwait(false);
        await Task.WhenAll(stdout, stderr).ConfigureAwait(false);
        return process.ExitCode;
    }

    /// <summary>The dotnet host that runs this agent, so ranks use the same runtime; "dotnet" from PATH otherwise.</summary>
    private static string DotnetHost
    {
        get
        {
            var current = System.Environment.ProcessPath;
            if (current is not null && Path.GetFileNameWithoutExtension(current).Equals("dotnet", StringComparison.OrdinalIgnoreCase)) return current;
            return System.Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        }
    }
}
