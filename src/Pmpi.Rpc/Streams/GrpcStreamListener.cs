using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// Serves one gRPC duplex method on PMPI's own HTTP/2 (<see cref="GrpcStream"/>): h2c, or TLS with ALPN h2 when
/// the security says so. Each connection gets a reader thread once its TLS handshake is done; each call is admitted
/// or refused on its first message, and only an admitted call is granted wide windows. The limits are
/// <see cref="RpcServerLimits"/>, as for every PMPI endpoint.
/// </summary>
public sealed class GrpcStreamListener : IDisposable
{
    private readonly Socket _socket;
    private readonly RpcSecurity _security;
    private readonly RpcServerLimits _limits;
    private readonly Http2Endpoint _endpoint;
    private readonly Dictionary<Http2Connection, IPAddress> _connections = []; // locked on itself
    private readonly Dictionary<IPAddress, int> _perAddress = [];
    private int _accepting; // handshakes under way, counted against the limit too
    private volatile bool _disposed;

    private GrpcStreamListener(Socket socket, RpcSecurity security, RpcServerLimits limits, string path, Func<GrpcStream, ReadOnlySequence<byte>, IGrpcStreamReceiver> admit)
    {
        _socket = socket;
        _security = security;
        _limits = limits;
        _endpoint = new Http2Endpoint
        {
            Admit = admit,
            Path = path,
            MaxStreams = limits.MaxStreamsPerConnection,
            StreamWindow = limits.StreamWindowSize,
            ConnectionWindow = limits.ConnectionWindowSize,
            PingDelay = limits.PingDelay,
            PingTimeout = limits.PingTimeout,
            AdmitTimeout = limits.HeadersTimeout,
            IdleTimeout = limits.IdleTimeout,
            Closed = Forget,
        };
        var bound = (IPEndPoint)socket.LocalEndPoint!;
        var dialable = bound.Address.Equals(IPAddress.Any) ? new IPEndPoint(IPAddress.Loopback, bound.Port) : bound;
        Address = security.AddressOf(dialable.ToString());
    }

    /// <summary>The address callers dial, e.g. http://127.0.0.1:41234 (the real port when 0 was asked for).</summary>
    public Uri Address { get; }

    /// <summary>Listens on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port) for calls to <paramref name="path"/>.</summary>
    /// <param name="address">Where to listen.</param>
    /// <param name="port">The TCP port; 0 picks a free one.</param>
    /// <param name="path">The method served, e.g. /pmpi.v1.RankTransport/Connect; calls to any other are refused UNIMPLEMENTED.</param>
    /// <param name="admit">Decides each call from its first message (on the connection's thread): its receiver, or an RpcException refusing it.</param>
    /// <param name="security">h2c (<see cref="RpcSecurity.Insecure"/>) or a TLS security that can serve.</param>
    /// <param name="limits"><see cref="RpcServerLimits.Default"/> when null.</param>
    public static GrpcStreamListener Start(IPAddress address, int port, string path, Func<GrpcStream, ReadOnlySequence<byte>, IGrpcStreamReceiver> admit,
        RpcSecurity security, RpcServerLimits? limits = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(admit);
        ArgumentNullException.ThrowIfNull(security);
        security.CheckListenAddress(address);
        var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(address, port));
            socket.Listen(512);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
        var listener = new GrpcStreamListener(socket, security, limits ?? RpcServerLimits.Default, path, admit);
        _ = listener.AcceptAsync();
        return listener;
    }

    /// <summary>Stops listening and closes every connection (their calls fail UNAVAILABLE).</summary>
    public void Dispose()
    {
        _disposed = true;
        _socket.Dispose();
        List<Http2Connection> open;
        lock (_connections) open = [.. _connections.Keys];
        foreach (var connection in open) connection.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_disposed)
        {
            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                if (_disposed) return;
                continue; // a connection reset before it was accepted, or descriptors ran out for a moment
            }
            var remote = accepted.RemoteEndPoint is IPEndPoint { Address: var ip } ? (ip.IsIPv4MappedToIPv6 ? ip.MapToIPv4() : ip) : IPAddress.None;
            if (!TryCount(remote))
            {
                accepted.Dispose();
                continue;
            }
            _ = HandshakeAsync(accepted, remote);
        }
    }

    private bool TryCount(IPAddress remote)
    {
        lock (_connections)
        {
            int fromRemote = _perAddress.GetValueOrDefault(remote);
            if (_connections.Count + _accepting >= _limits.MaxConnections || fromRemote >= _limits.MaxConnectionsPerAddress) return false;
            _perAddress[remote] = fromRemote + 1;
            _accepting++;
            return true;
        }
    }

    private async Task HandshakeAsync(Socket socket, IPAddress remote)
    {
        Http2Connection? connection = null;
        try
        {
            socket.NoDelay = true;
            Stream transport;
            TlsRecordStream? records = null;
            if (!_security.UsesTls) transport = new NetworkStream(socket, ownsSocket: true);
            else
            {
                records = new TlsRecordStream(socket);
                var tls = new SslStream(records, leaveInnerStreamOpen: false);
                using var deadline = new CancellationTokenSource(_limits.HeadersTimeout);
                var options = await _security.ServerTlsAsync(deadline.Token).ConfigureAwait(false);
                transport = await BlockingHandshake.RunAsync<Stream>(socket, _limits.HeadersTimeout, deadline.Token, () =>
                {
                    tls.AuthenticateAsServer(options);
                    return tls;
                }).ConfigureAwait(false);
            }
            connection = new Http2Connection(socket, transport, _endpoint, records);
            lock (_connections)
            {
                _accepting--;
                _connections.Add(connection, remote);
            }
            if (_disposed) throw new ObjectDisposedException(nameof(GrpcStreamListener));
            connection.Handshake();
            connection.StartReading();
        }
        catch (Exception)
        {
            // A failed handshake, a caller gone, a listener closing: the connection ends, the listener goes on.
            if (connection is null)
            {
                lock (_connections)
                {
                    _accepting--;
                    Uncount(remote);
                }
                socket.Dispose();
            }
            else connection.Dispose();
        }
    }

    private void Forget(Http2Connection connection)
    {
        lock (_connections)
            if (_connections.Remove(connection, out var remote)) Uncount(remote);
    }

    private void Uncount(IPAddress remote)
    {
        if (--_perAddress[remote] == 0) _perAddress.Remove(remote);
    }
}

/// <summary>Opens a <see cref="GrpcStream"/>: a connection of its own, TCP_NODELAY, TLS when the address is https.</summary>
internal static class GrpcStreamDialer
{
    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(10);

    /// <param name="address">The endpoint the call is for: TLS (its name and pin) and HTTP/2 speak to it.</param>
    /// <param name="path">The method.</param>
    /// <param name="security">h2c or TLS to <paramref name="address"/>.</param>
    /// <param name="headers">The call's extra request headers.</param>
    /// <param name="relay">
    /// When the endpoint is reached through a gateway: the gateway (host:port, its scheme ignored) and the preamble the
    /// connection starts with; TLS and HTTP/2 begin once the gateway answered OK, end to end with the endpoint.
    /// </param>
    /// <param name="cancellationToken">Abandons the dial.</param>
    public static async Task<GrpcStream> DialAsync(Uri address, string path, RpcSecurity security, IEnumerable<KeyValuePair<string, string>> headers,
        (Uri Gateway, RelayPreamble Preamble)? relay, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(security);
        security.CheckAddress(address);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(ConnectTimeout);
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        Stream? transport = null;
        TlsRecordStream? records = null;
        try
        {
            transport = await BlockingHandshake.RunAsync(socket, ConnectTimeout, deadline.Token, () =>
            {
                if (relay is { } through) ThroughGateway(socket, through.Gateway, through.Preamble);
                else socket.Connect(address.IdnHost, address.Port);
                if (security.ClientTls() is not { } tls) return new NetworkStream(socket, ownsSocket: true);
                tls.TargetHost ??= address.IdnHost;
                tls.ApplicationProtocols = [SslApplicationProtocol.Http2];
                records = new TlsRecordStream(socket);
                var secured = new SslStream(records, leaveInnerStreamOpen: false);
                secured.AuthenticateAsClient(tls);
                return (Stream)secured;
            }).ConfigureAwait(false);
            var connection = new Http2Connection(socket, transport, new Http2Endpoint { PingDelay = RpcOptions.Default.PingDelay, PingTimeout = RpcOptions.Default.PingTimeout }, records);
            connection.Handshake();
            return connection.Open(address.Authority, address.Scheme, path, headers);
        }
        catch (RpcException)
        {
            socket.Dispose();
            throw;
        }
        catch (Exception e) when (e is SocketException or IOException or ObjectDisposedException or OperationCanceledException or System.Security.Authentication.AuthenticationException)
        {
            if (transport is not null) await transport.DisposeAsync().ConfigureAwait(false);
            socket.Dispose();
            cancellationToken.ThrowIfCancellationRequested();
            bool late = deadline.IsCancellationRequested || e is SocketException { SocketErrorCode: SocketError.TimedOut };
            string via = relay is { } through ? $" through the gateway at {through.Gateway.Authority}" : "";
            throw new RpcException(new Status(StatusCode.Unavailable, $"Cannot open a call to {address}{path}{via}: {(late ? $"no connection within {ConnectTimeout.TotalSeconds:0} s" : e.Message)}", e));
        }
    }

    /// <summary>
    /// Connects <paramref name="socket"/> to <paramref name="gateway"/>, writes <paramref name="preamble"/> and reads the
    /// gateway's answer (blocking, within the handshake's deadline): returns on OK, the connection then relayed.
    /// </summary>
    /// <exception cref="RpcException">The gateway refused the stream: its status and reason.</exception>
    private static void ThroughGateway(Socket socket, Uri gateway, RelayPreamble preamble)
    {
        socket.Connect(gateway.IdnHost, gateway.Port);
        socket.Send(preamble.ToBytes());
        // Read exactly the reply: what follows is the destination's, for TLS or HTTP/2 to read.
        Span<byte> reply = stackalloc byte[3 + RelayReply.MaxReasonLength];
        int read = 0, needed = 3;
        StatusCode code;
        string reason;
        while (!RelayReply.TryRead(reply[..read], out code, out reason, out needed))
        {
            int received = socket.Receive(reply[read..needed]);
            if (received == 0) throw new IOException($"The gateway at {gateway.Authority} closed the connection before it answered the relay preamble.");
            read += received;
        }
        if (code != StatusCode.OK) throw new RpcException(new Status(code, $"The gateway at {gateway.Authority} refused the stream: {reason}"));
    }
}
