using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace Pmpi.Tests.Shared;

/// <summary>
/// A slow-loris caller: it opens HTTP/2 properly (preface, SETTINGS), starts a call whose HEADERS frame lacks
/// END_HEADERS, and then sends the CONTINUATION one byte every half second, so the call's headers never complete.
/// </summary>
internal static class SlowLoris
{
    /// <summary>Drips until the server closes the connection or <paramref name="limit"/> passes; returns how long the server took, or null if it never closed.</summary>
    public static async Task<TimeSpan?> DripUntilClosedAsync(int port, TimeSpan limit)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port).WaitAsync(limit);
        var clock = Stopwatch.StartNew();
        try
        {
            await SendPrefaceAsync(socket);
            await socket.SendAsync(new byte[] { 0, 0, 1, 0x1, 0, 0, 0, 0, 1, 0x83 }, SocketFlags.None);    // HEADERS, stream 1, :method POST
            byte[] continuation = [0, 0, 100, 0x9, 0, 0, 0, 0, 1];                                          // CONTINUATION of 100 bytes
            for (int i = 0; clock.Elapsed < limit; i++)
            {
                await socket.SendAsync(new[] { i < continuation.Length ? continuation[i] : (byte)0x40 }, SocketFlags.None);
                if (await ClosedWithinAsync(socket, TimeSpan.FromMilliseconds(500))) return clock.Elapsed;
            }
            return null;
        }
        catch (SocketException)
        {
            return clock.Elapsed; // reset by the server
        }
    }

    /// <summary>
    /// Opens HTTP/2 on <paramref name="socket"/> (preface, SETTINGS) and waits up to <paramref name="wait"/> for the
    /// server's first frame: whether it came, which shows the server took the connection past its admission.
    /// </summary>
    public static async Task<bool> OpenAsync(Socket socket, TimeSpan wait)
    {
        await SendPrefaceAsync(socket);
        using var timeout = new CancellationTokenSource(wait);
        try
        {
            return await socket.ReceiveAsync(new byte[4096], SocketFlags.None, timeout.Token) > 0;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private static async Task SendPrefaceAsync(Socket socket)
    {
        await socket.SendAsync("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray(), SocketFlags.None);
        await socket.SendAsync(new byte[] { 0, 0, 0, 0x4, 0, 0, 0, 0, 0 }, SocketFlags.None); // SETTINGS
    }

    /// <summary>Whether the server closed <paramref name="socket"/> (end of stream or reset) within <paramref name="wait"/>; what it sent before is skipped.</summary>
    public static async Task<bool> ClosedWithinAsync(Socket socket, TimeSpan wait)
    {
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(wait);
        try
        {
            while (true)
            {
                if (await socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token) == 0) return true;
            }
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (SocketException)
        {
            return true;
        }
    }
}
