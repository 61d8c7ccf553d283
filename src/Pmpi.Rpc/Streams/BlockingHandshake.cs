using System.Net.Sockets;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// Connecting and TLS handshakes of rank streams, made with blocking calls on a thread of their own and bounded by a
/// deadline. .NET on Unix turns a socket non-blocking at its first asynchronous call, for good, and from then on runs
/// every synchronous read or write that has to wait through its epoll thread and a thread-pool worker: several
/// context switches where a blocking socket takes none, paid by each write of a bulk transfer and each TLS read.
/// A rank stream reads and writes synchronously, so its socket never sees an asynchronous call.
/// </summary>
internal static class BlockingHandshake
{
    /// <summary>
    /// Runs <paramref name="handshake"/> on a thread of its own, its blocking calls on <paramref name="socket"/> cut
    /// off after <paramref name="timeout"/> (SO_SNDTIMEO also bounds a connect on Linux) or when
    /// <paramref name="cancellationToken"/> is cancelled (the socket is closed, which ends a blocked call).
    /// </summary>
    public static Task<T> RunAsync<T>(Socket socket, TimeSpan timeout, CancellationToken cancellationToken, Func<T> handshake) =>
        Task.Factory.StartNew(() =>
        {
            using var abort = cancellationToken.Register(socket.Dispose);
            socket.SendTimeout = socket.ReceiveTimeout = (int)timeout.TotalMilliseconds;
            var result = handshake();
            socket.SendTimeout = socket.ReceiveTimeout = 0; // from now on the connection's own watch bounds it
            return result;
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
