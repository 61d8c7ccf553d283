using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Pmpi.Bench.PingPong;

namespace Pmpi.Bench.Baselines;

/// <summary>
/// What .NET's TLS costs on this machine, without PMPI: the ping-pong's sizes and iterations between two threads over
/// a TCP loopback connection, either on the plain sockets or through an <see cref="SslStream"/> (TLS 1.3, an
/// ephemeral ECDSA P-256 certificate) on each end, as PMPI's rank streams use it; blocking reads and writes. The scale
/// for PMPI's TLS/h2c ratios at every size (bench/native/tls_pingpong.py gives OpenSSL's own from 64 KB, where Python
/// does not dominate). Writes pingpong.c's line per size: <c>size\thalf_rtt_us\tMB/s</c>.
/// </summary>
public static class TlsFloorBenchmark
{
    /// <summary>Runs every size on plain sockets (<paramref name="tls"/> false) or through TLS.</summary>
    public static void Run(TextWriter output, bool tls, bool quick)
    {
        ArgumentNullException.ThrowIfNull(output);
        var (ping, pong) = Connect(tls);
        using (ping)
        using (pong)
        {
            // Untimed quick sweeps first, so that the timed one runs steady-state code, as `pingpong --jit-warmup`.
            JitWarmup.Run(() =>
            {
                foreach (int size in PingPongBenchmark.Sizes) RoundTrips(ping, pong, size, PingPongBenchmark.IterationsFor(size, quick: true));
            }, mostOverRanks: compiling => compiling);
            foreach (int size in PingPongBenchmark.Sizes)
            {
                int iterations = PingPongBenchmark.IterationsFor(size, quick);
                double seconds = RoundTrips(ping, pong, size, iterations) / iterations / 2;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{size}\t{seconds * 1e6:F2}\t{size / seconds / 1e6:F1}"));
                output.Flush();
            }
        }
    }

    /// <summary>Seconds for <paramref name="count"/> round trips of <paramref name="size"/> bytes, the echo on a thread of its own.</summary>
    private static double RoundTrips(Stream ping, Stream pong, int size, int count)
    {
        var outgoing = new byte[size];
        var echoed = new byte[size];
        Array.Fill(outgoing, (byte)1);
        var echo = new Thread(() =>
        {
            for (int i = 0; i < count; i++)
            {
                pong.ReadExactly(echoed);
                pong.Write(echoed);
            }
        });
        echo.Start();
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < count; i++)
        {
            ping.Write(outgoing);
            ping.ReadExactly(outgoing);
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        echo.Join();
        return seconds;
    }

    /// <summary>Both ends of one loopback connection, as streams: plain, or TLS after the handshake and its session tickets.</summary>
    private static (Stream Ping, Stream Pong) Connect(bool tls)
    {
        using var listener = new Socket(SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        var dialed = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        dialed.Connect(listener.LocalEndPoint!);
        var accepted = listener.Accept();
        accepted.NoDelay = true;
        Stream ping = new NetworkStream(dialed, ownsSocket: true), pong = new NetworkStream(accepted, ownsSocket: true);
        if (!tls) return (ping, pong);

        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=pmpi-bench", key, HashAlgorithmName.SHA256);
        using var ephemeral = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddHours(1));
        // SslStream on Linux serves a certificate whose key it can export: reload it from PKCS#12.
        var certificate = X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), password: null);
        var server = new SslStream(pong);
        var client = new SslStream(ping);
        var serving = server.AuthenticateAsServerAsync(new SslServerAuthenticationOptions
        {
            ServerCertificate = certificate,
            EnabledSslProtocols = SslProtocols.Tls13,
        });
        client.AuthenticateAsClient(new SslClientAuthenticationOptions
        {
            TargetHost = "pmpi-bench",
            EnabledSslProtocols = SslProtocols.Tls13,
            // The certificate was made above for this connection alone: pinned by reference.
            RemoteCertificateValidationCallback = (_, presented, _, _) => presented is not null && presented.GetCertHashString() == certificate.GetCertHashString(),
        });
        serving.GetAwaiter().GetResult();
        // TLS 1.3 sends session tickets after the handshake: one round trip takes them before timing starts.
        RoundTrips(client, server, 1, 1);
        return (client, server);
    }
}
