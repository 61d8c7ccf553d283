using System.Globalization;

namespace Pmpi.Rpc;

/// <summary>
/// What one listener lets its callers make the process hold: connections (in total and per remote address), time to
/// send request headers, time a connection may idle without a call, and the HTTP/2 flow-control windows that bound
/// what a peer can send before the server reads it. Every PMPI endpoint (rank, agent, master) has these limits.
/// </summary>
public sealed record RpcServerLimits
{
    /// <summary>
    /// Connections the listener holds at once. Defaults to three quarters of the process's open-file limit where the
    /// OS states one (Linux: RLIMIT_NOFILE), else 8,192, so a flood of connections cannot take the descriptors the
    /// process needs for its own files, pipes and ranks. On a daemon's listener (KestrelGrpcExtensions.ListenGrpc) a
    /// new connection beyond it closes the oldest connection not yet authenticated (<see cref="AuthenticationTimeout"/>),
    /// and is itself closed as soon as it is accepted only when every connection is authenticated; a rank endpoint
    /// closes it.
    /// </summary>
    public int MaxConnections
    {
        get;
        init
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            field = value;
        }
    } = DefaultMaxConnections();

    /// <summary>
    /// Connections one remote IP address may hold at once, shed as <see cref="MaxConnections"/> are: on a daemon's
    /// listener a new one beyond it closes that address's oldest connection not yet authenticated, so idle or
    /// unauthenticated connections cannot lock the address's authenticated clients out, and is refused only when all
    /// of them are authenticated. Defaults to 1,024: more than the ranks one node runs with oversubscription on a
    /// 64-core node (8 per slot), each holding a connection to a peer or the master, while a single host still cannot
    /// take a listener's connections.
    /// </summary>
    public int MaxConnectionsPerAddress
    {
        get;
        init
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            field = value;
        }
    } = 1024;

    /// <summary>
    /// How long a connection may go without an open call (a caller that connected and sent nothing, or finished
    /// its calls) before it is closed. Defaults to 30 seconds. A long-lived call, however quiet, keeps its
    /// connection: HTTP/2 pings (every 10 s, answered within 20 s) find a dead peer instead.
    /// </summary>
    public TimeSpan IdleTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a daemon's connection may stay unauthenticated before it is closed: until a client certificate of the
    /// cluster completed its TLS handshake, or a call on it passed its check (a request signature, a job key, a route
    /// proof). Defaults to 10 seconds; a caller proves itself within milliseconds. A listener that authenticates
    /// nobody (<see cref="Security.RpcSecurity.Insecure"/>) counts every connection as authenticated.
    /// </summary>
    public TimeSpan AuthenticationTimeout
    {
        get;
        init
        {
            ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(value, TimeSpan.Zero);
            field = value;
        }
    } = TimeSpan.FromSeconds(10);

    /// <summary>How long a caller may take to send a call's headers (a slow-loris defence). Defaults to 10 seconds.</summary>
    public TimeSpan HeadersTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The HTTP/2 connection window: bytes a peer may send on all streams of a connection before the server reads
    /// them. Defaults to 33,554,432 (32 MB), so large MPI messages never wait on window updates.
    /// </summary>
    public int ConnectionWindowSize { get; init; } = 32 * 1024 * 1024;

    /// <summary>The HTTP/2 stream window: bytes a peer may send on one stream before it is read. Defaults to 16,777,216 (16 MB).</summary>
    public int StreamWindowSize { get; init; } = 16 * 1024 * 1024;

    /// <summary>Concurrent calls on one connection. Defaults to 1,000.</summary>
    public int MaxStreamsPerConnection { get; init; } = 1000;

    /// <summary>
    /// How long a connection may bring no frame before the server sends an HTTP/2 PING. Defaults to 10 seconds.
    /// Pings are answered by the peer's HTTP/2 stack, not its application code, so a busy peer answers and a
    /// stopped (SIGSTOP) or frozen one does not.
    /// </summary>
    public TimeSpan PingDelay { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a PING may go unanswered before the connection and its calls are ended. Defaults to 20 seconds.</summary>
    public TimeSpan PingTimeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>The limits of rank endpoints: wide windows for bulk MPI traffic.</summary>
    public static RpcServerLimits Default { get; } = new();

    /// <summary>
    /// The limits of control-plane endpoints (agent, master), whose calls carry small messages: Kestrel's default
    /// windows (1 MB per connection, 768 KB per stream) and 100 calls per connection, so a peer makes the daemon
    /// hold little before a handler has looked at its call; and a PING after 1 s without a frame, answered within
    /// 5 s, so an agent finds a frozen master (whose Launch calls send it nothing) as fast as a master finds a
    /// frozen agent by its heartbeats.
    /// </summary>
    public static RpcServerLimits ControlPlane { get; } = new()
    {
        ConnectionWindowSize = 1024 * 1024,
        StreamWindowSize = 768 * 1024,
        MaxStreamsPerConnection = 100,
        PingDelay = TimeSpan.FromSeconds(1),
        PingTimeout = TimeSpan.FromSeconds(5),
    };

    private static int DefaultMaxConnections()
    {
        const int Fallback = 8192;
        if (!OperatingSystem.IsLinux()) return Fallback;
        try
        {
            // "Max open files            4096                 4096                 files"
            foreach (var line in File.ReadLines("/proc/self/limits"))
            {
                if (!line.StartsWith("Max open files", StringComparison.Ordinal)) continue;
                var soft = line["Max open files".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries)[0];
                return long.TryParse(soft, NumberStyles.None, CultureInfo.InvariantCulture, out long files)
                    ? (int)Math.Clamp(files / 4 * 3, 64, 1_000_000)
                    : Fallback; // "unlimited"
            }
        }
        catch (IOException)
        {
        }
        return Fallback;
    }
}
