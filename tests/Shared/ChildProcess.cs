using System.Diagnostics;
using System.Text;

namespace Pmpi.Tests.Shared;

/// <summary>
/// A process a test started: both output streams captured line by line, every wait bounded, and the process (with
/// its children) killed by id on dispose if it still runs. Shared by the test projects (linked from tests/Shared).
/// </summary>
internal sealed class ChildProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly List<string> _stdout = [];
    private readonly List<string> _stderr = [];
    private readonly Lock _gate = new();
    private readonly TaskCompletionSource _stdoutDone = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _stderrDone = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private TaskCompletionSource _lineArrived = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private ChildProcess(Process process) => _process = process;

    /// <summary>The process id.</summary>
    public int Id => _process.Id;

    /// <summary>Whether the process has ended.</summary>
    public bool HasExited => _process.HasExited;

    /// <summary>Standard output so far.</summary>
    public IReadOnlyList<string> Stdout
    {
        get
        {
            lock (_gate) return [.. _stdout];
        }
    }

    /// <summary>Standard error so far.</summary>
    public IReadOnlyList<string> Stderr
    {
        get
        {
            lock (_gate) return [.. _stderr];
        }
    }

    /// <summary>Both streams so far, for failure messages.</summary>
    public string Transcript
    {
        get
        {
            lock (_gate) return $"--- process {Id} stdout ---\n{string.Join('\n', _stdout)}\n--- stderr ---\n{string.Join('\n', _stderr)}\n";
        }
    }

    /// <summary>
    /// Starts <paramref name="fileName"/>; <paramref name="environment"/> adds to (or with a null value removes from)
    /// the inherited variables. Standard input is closed at once unless <paramref name="keepInputOpen"/>, for a
    /// process that runs until its input ends (see <see cref="CloseInput"/>).
    /// </summary>
    public static ChildProcess Start(string fileName, IEnumerable<string> arguments, IReadOnlyDictionary<string, string?>? environment = null,
        string? workingDirectory = null, bool keepInputOpen = false)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            StandardOutputEncoding = Encoding.UTF8,
            StandardErrorEncoding = Encoding.UTF8,
            WorkingDirectory = workingDirectory ?? System.Environment.CurrentDirectory,
        };
        foreach (var argument in arguments) start.ArgumentList.Add(argument);
        // Everything is on loopback: a proxy from the environment would only get in the way.
        foreach (var name in new[] { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "grpc_proxy" })
            start.Environment.Remove(name);
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            if (value is null) start.Environment.Remove(name);
            else start.Environment[name] = value;
        }

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        var child = new ChildProcess(process);
        process.OutputDataReceived += (_, e) => child.Add(e.Data, child._stdout, child._stdoutDone);
        process.ErrorDataReceived += (_, e) => child.Add(e.Data, child._stderr, child._stderrDone);
        process.Start();
        if (!keepInputOpen) process.StandardInput.Close();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return child;
    }

    /// <summary>Runs a command to its end within <paramref name="timeout"/>; returns its exit code and transcript.</summary>
    public static async Task<(int ExitCode, string Transcript)> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout,
        IReadOnlyDictionary<string, string?>? environment = null)
    {
        await using var child = Start(fileName, arguments, environment);
        int code = await child.WaitForExitAsync(timeout).ConfigureAwait(false);
        return (code, child.Transcript);
    }

    /// <summary>Closes standard input of a process started with keepInputOpen (a server that stops when its input ends).</summary>
    public void CloseInput() => _process.StandardInput.Close();

    /// <summary>Writes <paramref name="text"/> to the standard input of a process started with keepInputOpen, at once.</summary>
    public async Task WriteInputAsync(string text)
    {
        await _process.StandardInput.WriteAsync(text).ConfigureAwait(false);
        await _process.StandardInput.FlushAsync().ConfigureAwait(false);
    }

    /// <summary>Waits for a line on either stream that satisfies <paramref name="match"/>; returns it.</summary>
    /// <exception cref="TimeoutException">No such line within <paramref name="timeout"/>, or the process ended without one.</exception>
    public async Task<string> WaitForLineAsync(Func<string, bool> match, TimeSpan timeout, string what)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            Task arrived;
            lock (_gate)
            {
                if (_stdout.Concat(_stderr).FirstOrDefault(match) is { } line) return line;
                if (_stdoutDone.Task.IsCompleted && _stderrDone.Task.IsCompleted)
                    throw new TimeoutException($"Process {Id} ended without writing {what}.\n{Transcript}");
                arrived = _lineArrived.Task;
            }
            var left = timeout - deadline.Elapsed;
            if (left <= TimeSpan.Zero || await Task.WhenAny(arrived, Task.Delay(left)).ConfigureAwait(false) != arrived)
                throw new TimeoutException($"Process {Id} did not write {what} within {timeout}.\n{Transcript}");
        }
    }

    /// <summary>Waits for the process to exit and its output to be read; returns the exit code.</summary>
    /// <exception cref="TimeoutException">It still ran after <paramref name="timeout"/>.</exception>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cancel.Token).ConfigureAwait(false);
            await Task.WhenAll(_stdoutDone.Task, _stderrDone.Task).WaitAsync(cancel.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException e)
        {
            throw new TimeoutException($"Process {Id} still ran after {timeout}.\n{Transcript}", e);
        }
        return _process.ExitCode;
    }

    /// <summary>Kills the process and its children by id if it still runs.</summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await _process.WaitForExitAsync(cancel.Token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException or System.ComponentModel.Win32Exception)
        {
            // Already gone, or not killable: nothing more a test can do.
        }
        finally
        {
            _process.Dispose();
        }
    }

    private void Add(string? line, List<string> lines, TaskCompletionSource done)
    {
        TaskCompletionSource arrived;
        lock (_gate)
        {
            if (line is null) done.TrySetResult();
            else lines.Add(line);
            arrived = _lineArrived;
            _lineArrived = new(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        arrived.TrySetResult();
    }
}
