using System.Globalization;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>Samples a process's resident memory (VmRSS in /proc/PID/status) in the background, keeping the peak.</summary>
internal sealed class ResidentMemoryProbe : IAsyncDisposable
{
    private readonly int _processId;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private long _peak;

    public ResidentMemoryProbe(int processId)
    {
        _processId = processId;
        _sampling = SampleAsync();
    }

    /// <summary>The highest resident set size seen so far, in bytes.</summary>
    public long PeakBytes
    {
        get
        {
            Sample();
            return Interlocked.Read(ref _peak);
        }
    }

    /// <summary>The peak in MB, for messages.</summary>
    public double PeakMegabytes => PeakBytes / (1024.0 * 1024);

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _sampling;
        _stop.Dispose();
    }

    private async Task SampleAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Sample();
            try
            {
                await Task.Delay(100, _stop.Token);
            }
            catch (OperationCanceledException)
            {
            }
        }
    }

    private void Sample()
    {
        try
        {
            foreach (var line in File.ReadLines($"/proc/{_processId}/status"))
            {
                if (!line.StartsWith("VmRSS:", StringComparison.Ordinal)) continue;
                long bytes = long.Parse(line["VmRSS:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
                long seen;
                while ((seen = Interlocked.Read(ref _peak)) < bytes && Interlocked.CompareExchange(ref _peak, bytes, seen) != seen)
                {
                }
                return;
            }
        }
        catch (IOException)
        {
            // The process ended.
        }
    }
}
