using System.Diagnostics;
using System.Globalization;

namespace Pmpi.Bench.Baselines;

/// <summary>
/// What the hardware and runtime allow, without PMPI: the floor under the in-process ping-pong. A cross-thread
/// hand-off by spinning on a shared field, the same with the blocking wake-up a rank pays once it stops spinning,
/// and single-threaded memory-copy bandwidth (a rendezvous transfer is one such copy).
/// </summary>
public static class BaselineBenchmark
{
    private const int HandOffs = 200_000;

    /// <summary>Writes one line per measurement to <paramref name="output"/>.</summary>
    public static void Run(TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(output);
        Write(output, $"# hand-off between two threads, half round trip ({HandOffs} round trips)");
        Write(output, $"spin (volatile flag)\t{SpinPingPong(HandOffs) * 1e6:F3} us");
        Write(output, $"Monitor.Wait/Pulse\t{MonitorPingPong(HandOffs / 20) * 1e6:F3} us");
        Write(output, $"# single-threaded copy, Span<byte>.CopyTo between two arrays");
        foreach (int n in new[] { 1024, 65536, 1 << 20, 4 << 20, 16 << 20 })
        {
            double seconds = CopyTime(n);
            Write(output, $"copy {n}\t{seconds * 1e6:F2} us\t{n / seconds / 1e6:F1} MB/s");
        }
    }

    private static void Write(TextWriter output, FormattableString line) => output.WriteLine(line.ToString(CultureInfo.InvariantCulture));

    // The least a cross-core hand-off can cost: each side spins on a field the other writes.
    private static double SpinPingPong(int rounds)
    {
        int turn = 0; // 0: ping's turn, 1: pong's
        var pong = new Thread(() =>
        {
            for (int i = 0; i < rounds; i++)
            {
                var spinner = new SpinWait();
                while (Volatile.Read(ref turn) != 1) spinner.SpinOnce(sleep1Threshold: -1);
                Volatile.Write(ref turn, 0);
            }
        });
        pong.Start();
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < rounds; i++)
        {
            Volatile.Write(ref turn, 1);
            var spinner = new SpinWait();
            while (Volatile.Read(ref turn) != 0) spinner.SpinOnce(sleep1Threshold: -1);
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        pong.Join();
        return seconds / rounds / 2;
    }

    // What a rank pays once it has given up spinning: a kernel wait and a wake-up per message.
    private static double MonitorPingPong(int rounds)
    {
        var gate = new object();
        int turn = 0;
        var pong = new Thread(() =>
        {
            for (int i = 0; i < rounds; i++)
            {
                lock (gate)
                {
                    while (turn != 1) Monitor.Wait(gate);
                    turn = 0;
                    Monitor.Pulse(gate);
                }
            }
        });
        pong.Start();
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < rounds; i++)
        {
            lock (gate)
            {
                turn = 1;
                Monitor.Pulse(gate);
                while (turn != 0) Monitor.Wait(gate);
            }
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        pong.Join();
        return seconds / rounds / 2;
    }

    private static double CopyTime(int n)
    {
        var source = new byte[n];
        var destination = new byte[n];
        Array.Fill(source, (byte)1);
        int iters = n <= 65536 ? 20000 : 200;
        for (int i = 0; i < iters / 10; i++) source.AsSpan().CopyTo(destination);
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < iters; i++) source.AsSpan().CopyTo(destination);
        return Stopwatch.GetElapsedTime(start).TotalSeconds / iters;
    }
}
