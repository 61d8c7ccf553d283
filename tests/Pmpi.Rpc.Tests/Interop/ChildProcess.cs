using System.Diagnostics;
using System.Text;
using System.Threading.Channels;

namespace Pmpi.Rpc.Tests.Interop;

/// <summary>
/// A child process for a test: output captured line by line, every wait bounded, and the process (with its
/// children) killed by id on dispose if it is still running.
/// </summary>
internal sealed class ChildProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
    private readonly StringBuilder _output = new();
    private readonly StringBuilder _errors = new();
    private readonly Lock _gate = new();

    private ChildProcess(Process process) => _process = process;

    /// <summary>The process id, for messages.</summary>
    public int Id => _process.Id;

    /// <summary>Everything written so far to standard output and standard error, for failure messages.</summary>
    public string Transcript
    {
        get
        {
            lock (_gate) return $"--- stdout ---\n{_output}--- stderr ---\n{_errors}";
        }
    }

    /// <summary>Starts <paramref name="fileName"/> with <paramref name="arguments"/>; proxies are removed from its environment.</summary>
    public static ChildProcess Start(string fileName, IEnumerable<string> arguments, string? workingDirectory = null)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? System.Environment.CurrentDirectory,
        };
        foreach (var argument in arguments) start.ArgumentList.Add(argument);
        // Everything is on loopback: a proxy from the environment (which grpcio honours) would only get in the way.
        foreach (var name in new[] { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "grpc_proxy" })
            start.Environment.Remove(name);
        start.Environment["PYTHONNOUSERSITE"] = "1";
        start.Environment["PYTHONDONTWRITEBYTECODE"] = "1";
        start.Environment["PYTHONUNBUFFERED"] = "1";

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        var child = new ChildProcess(process);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                child._lines.Writer.TryComplete();
                return;
            }
            lock (child._gate) child._output.AppendLine(e.Data);
            child._lines.Writer.TryWrite(e.Data);
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is null) return;
            lock (child._gate) child._errors.AppendLine(e.Data);
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return child;
    }

    /// <summary>Runs a command to its end within <paramref name="timeout"/>; returns its exit code and transcript.</summary>
    public static async Task<(int ExitCode, string Transcript)> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout)
    {
        await using var child = Start(fileName, arguments);
        child.CloseInput();
        int code = await child.WaitForExitAsync(timeout).ConfigureAwait(false);
        return (code, child.Transcript);
    }

    /// <summary>The next line of standard output.</summary>
    /// <exception cref="TimeoutException">No line came within <paramref name="timeout"/>, or the output ended.</exception>
    public async Task<string> ReadLineAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            return await _lines.Reader.ReadAsync(cancel.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or ChannelClosedException)
        {
            throw new TimeoutException($"Process {Id} wrote no line within {timeout} (or ended).\n{Transcript}", e);
        }
    }

    /// <summary>Closes the process's standard input (the grpcio server stops when it does).</summary>
    public void CloseInput() => _process.StandardInput.Close();

    /// <summary>Waits for the process to exit and for its output to be read.</summary>
    /// <exception cref="TimeoutException">It still ran after <paramref name="timeout"/>.</exception>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cancel.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException e)
        {
            throw new TimeoutException($"Process {Id} still ran after {timeout}.\n{Transcript}", e);
        }
        return _process.ExitCode;
    }

    /// <summary>Kills the process and its children by id if still running.</summary>
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
}
