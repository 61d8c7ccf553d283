using System.Diagnostics;
using System.Globalization;

namespace Pmpi.Bench.Transport;

/// <summary>
/// PMPI's HTTP/2 beside gRPC for .NET, round after round in alternating order (PMPI first in odd rounds, gRPC for
/// .NET first in even ones). Each round opens a new connection per implementation and size and times every round
/// trip on it: the first <see cref="ColdTrips"/> right after connect (cold), then, after an untimed warm-up, the
/// warmed ones. The very first connection of each implementation in the process (round 1, first size) runs code the
/// JIT has not compiled yet; it is reported on its own line and kept out of the cold figures.
/// </summary>
public static class TransportBenchmark
{
    public static readonly int[] Sizes = [8, 1024, 65536, 1 << 20];
    private const int ColdTrips = 100;

    public static async Task RunAsync(TextWriter output, int[] sizes, int rounds, bool quick, bool tls)
    {
        foreach (int size in sizes) PingPongFrames.Check(size);
        await using var pmpi = new PmpiPingPong(tls);
        await using var grpc = await GrpcDotnetPingPong.StartAsync(tls);
        IPingPong[] sides = [pmpi, grpc];
        var runs = new List<Run>();
        Line(output, $"# {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC, {Environment.ProcessorCount} cores, .NET {Environment.Version}, {rounds} rounds, {(tls ? "TLS 1.3" : "h2c")}, load average {LoadAverage()}");
        Line(output, $"# round\tside\tsize\tphase\tcount\tmedian_us\tp10_us\tp90_us\tMB/s\tconnect_us\tfrom_s\tto_s (Unix time, as bench/native/placement.c's samples)");
        for (int round = 1; round <= rounds; round++)
        {
            foreach (var side in round % 2 == 1 ? sides : sides.Reverse())
            {
                foreach (int size in sizes)
                {
                    long start = Stopwatch.GetTimestamp();
                    await using var connection = await side.ConnectAsync(size);
                    double connectUs = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
                    var cold = new long[ColdTrips];
                    double coldFrom = UnixSeconds();
                    await connection.RoundTripsAsync(cold);
                    double coldTo = UnixSeconds();
                    var (warmup, timed) = Iterations(size, quick);
                    await connection.RoundTripsAsync(new long[warmup]);
                    var warm = new long[timed];
                    double warmFrom = UnixSeconds();
                    await connection.RoundTripsAsync(warm);
                    double warmTo = UnixSeconds();
                    bool first = round == 1 && size == sizes[0];
                    foreach (var run in new[] { new Run(round, side.Name, size, first ? "first" : "cold", HalfMicroseconds(cold), connectUs, coldFrom, coldTo), new Run(round, side.Name, size, "warm", HalfMicroseconds(warm), connectUs, warmFrom, warmTo) })
                    {
                        runs.Add(run);
                        Line(output, $"{run.Round}\t{run.Side}\t{run.Size}\t{run.Phase}\t{run.Half.Length}\t{Percentile(run.Half, 50):F1}\t{Percentile(run.Half, 10):F1}\t{Percentile(run.Half, 90):F1}\t{run.Size / Percentile(run.Half, 50):F1}\t{run.ConnectUs:F0}\t{run.From:F3}\t{run.To:F3}");
                    }
                }
            }
        }
        Summary(output, runs, sizes, pmpi.Name, grpc.Name);
    }

    private static void Summary(TextWriter output, List<Run> runs, int[] sizes, string pmpi, string grpc)
    {
        Line(output, $"");
        Line(output, $"Half round trip, µs: median (p10–p90) of all rounds' round trips; MB/s from the median; ratio {grpc} / PMPI: the median over the rounds of each round's ratio of medians, with its min–max. Load average after: {LoadAverage()}.");
        Line(output, $"");
        Line(output, $"| size | phase | PMPI µs | {grpc} µs | PMPI MB/s | {grpc} MB/s | {grpc} / PMPI |");
        Line(output, $"|---:|---|---:|---:|---:|---:|---:|");
        foreach (string phase in new[] { "warm", "cold" })
        {
            foreach (int size in sizes)
            {
                var a = runs.Where(r => r.Side == pmpi && r.Size == size && r.Phase == phase).ToList();
                var b = runs.Where(r => r.Side == grpc && r.Size == size && r.Phase == phase).ToList();
                if (a.Count == 0 || b.Count == 0) continue;
                double[] pooledA = [.. a.SelectMany(r => r.Half)], pooledB = [.. b.SelectMany(r => r.Half)];
                double medianA = Percentile(pooledA, 50), medianB = Percentile(pooledB, 50);
                var ratios = a.Join(b, r => r.Round, r => r.Round, (x, y) => Percentile(y.Half, 50) / Percentile(x.Half, 50)).ToList();
                Line(output, $"| {SizeName(size)} | {phase} | {medianA:F1} ({Percentile(pooledA, 10):F1}–{Percentile(pooledA, 90):F1}) | {medianB:F1} ({Percentile(pooledB, 10):F1}–{Percentile(pooledB, 90):F1}) | {size / medianA:F1} | {size / medianB:F1} | {Percentile([.. ratios], 50):F2}× ({ratios.Min():F2}–{ratios.Max():F2}) |");
            }
        }
        foreach (string side in new[] { pmpi, grpc })
        {
            var first = runs.Single(r => r.Side == side && r.Phase == "first");
            double[] connects = [.. runs.Where(r => r.Side == side && r.Phase != "warm" && r.Phase != "first").Select(r => r.ConnectUs)];
            Line(output, $"");
            Line(output, $"{side}: first connection in the process ({SizeName(first.Size)}): connect + Hello echo {first.ConnectUs / 1000:F1} ms, first round trip {first.Half[0] * 2:F0} µs, median half round trip of its first {first.Half.Length} {Percentile(first.Half, 50):F1} µs; later connections: connect + Hello echo median {Percentile(connects, 50):F0} µs.");
        }
    }

    private static (int Warmup, int Timed) Iterations(int size, bool quick)
    {
        var (warmup, timed) = size <= 1024 ? (2000, 5000) : size <= 65536 ? (500, 2000) : (100, 300);
        return quick ? (warmup / 10, Math.Max(timed / 10, 30)) : (warmup, timed);
    }

    private static double[] HalfMicroseconds(long[] ticks) => [.. ticks.Select(t => t * 1e6 / Stopwatch.Frequency / 2)];

    private static double Percentile(double[] values, int percent)
    {
        var sorted = values.Order().ToArray();
        return sorted[Math.Min(sorted.Length - 1, (int)Math.Round(percent / 100.0 * (sorted.Length - 1)))];
    }

    private static string SizeName(int size) => size >= 1 << 20 ? $"{size >> 20} MB" : size >= 1024 ? $"{size >> 10} KB" : $"{size} B";

    private static string LoadAverage() => File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3)) : "unknown";

    private static void Line(TextWriter output, FormattableString line)
    {
        output.WriteLine(line.ToString(CultureInfo.InvariantCulture));
        output.Flush();
    }

    private static double UnixSeconds() => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0;

    private sealed record Run(int Round, string Side, int Size, string Phase, double[] Half, double ConnectUs, double From, double To);
}
