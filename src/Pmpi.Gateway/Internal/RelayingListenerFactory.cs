using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Streams;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// Kestrel's transport for the gateway's one port: it accepts the sockets itself and peeks at each connection's first
/// bytes (MSG_PEEK, nothing consumed). A connection that begins with the relay preamble's magic ("PM", where TLS
/// begins 0x16 and HTTP/2 "PRI") stays a raw socket for <see cref="OpaqueRelay"/>; every other one becomes Kestrel's,
/// through <see cref="SocketConnectionContextFactory"/>, exactly as Kestrel's own socket transport would have made it,
/// and meets the listener's connection admission and TLS as before. Connections waiting for their first bytes or
/// their preamble are bounded (<see cref="GatewayOptions.MaxPendingConnections"/>, a quarter of them per address) and
/// timed (<see cref="GatewayOptions.PreambleTimeout"/>).
/// </summary>
internal sealed class RelayingListenerFactory(OpaqueRelay relay, GatewayOptions options, ILoggerFactory loggers) : IConnectionListenerFactory
{
    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        if (endpoint is not IPEndPoint ip) throw new NotSupportedException($"The gateway listens on an IP endpoint, not {endpoint}.");
        var socket = new Socket(ip.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (ip.Address.Equals(IPAddress.IPv6Any)) socket.DualMode = true;
            socket.Bind(ip);
            socket.Listen(512);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            socket.Dispose();
            throw new AddressInUseException(e.Message, e);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
        var contexts = new SocketConnectionContextFactory(new SocketConnectionFactoryOptions(), loggers.CreateLogger("Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets"));
        return ValueTask.FromResult<IConnectionListener>(new Listener(socket, contexts, relay, options));
    }

    private sealed class Listener : IConnectionListener
    {
        private readonly Socket _socket;
        private readonly SocketConnectionContextFactory _contexts;
        private readonly OpaqueRelay _relay;
        private readonly GatewayOptions _options;
        private readonly Channel<ConnectionContext> _forKestrel = Channel.CreateUnbounded<ConnectionContext>(new UnboundedChannelOptions { SingleReader = true });
        private readonly CancellationTokenSource _stopping = new();
        private readonly Dictionary<IPAddress, int> _pending = []; // locked on itself
        private readonly HashSet<Socket> _relayed = []; // locked on itself: closed when the listener is disposed
        private readonly Task _accepting;
        private int _pendingTotal;

        public Listener(Socket socket, SocketConnectionContextFactory contexts, OpaqueRelay relay, GatewayOptions options)
        {
            (_socket, _contexts, _relay, _options) = (socket, contexts, relay, options);
            EndPoint = socket.LocalEndPoint!;
            _accepting = AcceptAsync();
        }

        public EndPoint EndPoint { get; }

        public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
        {
            try
            {
                return await _forKestrel.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (ChannelClosedException)
            {
                return null;
            }
        }

        public async ValueTask UnbindAsync(CancellationToken cancellationToken = default)
        {
            _socket.Dispose();
            _forKestrel.Writer.TryComplete();
            await _accepting.ConfigureAwait(false);
        }

        public async ValueTask DisposeAsync()
        {
            await UnbindAsync().ConfigureAwait(false);
            await _stopping.CancelAsync().ConfigureAwait(false);
            lock (_relayed)
                foreach (var socket in _relayed) socket.Dispose();
            while (_forKestrel.Reader.TryRead(out var unclaimed)) await unclaimed.DisposeAsync().ConfigureAwait(false);
            _contexts.Dispose();
            _stopping.Dispose();
        }

        private async Task AcceptAsync()
        {
            while (true)
            {
                Socket accepted;
                try
                {
                    accepted = await _socket.AcceptAsync().ConfigureAwait(false);
                }
                catch (ObjectDisposedException)
                {
                    return;
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.OperationAborted)
                {
                    return;
                }
                catch (SocketException)
                {
                    continue; // a connection reset before it was accepted, or descriptors ran out for a moment
                }
                var remote = accepted.RemoteEndPoint is IPEndPoint { Address: var address } endpoint
                    ? new IPEndPoint(address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address, endpoint.Port) : new IPEndPoint(IPAddress.None, 0);
                if (!TryHold(remote.Address))
                {
                    accepted.Dispose();
                    continue;
                }
                _ = ServeAsync(accepted, remote);
            }
        }

        /// <summary>Whether another connection may wait for its first bytes: within the total and the address's share.</summary>
        private bool TryHold(IPAddress remote)
        {
            lock (_pending)
            {
                int fromRemote = _pending.GetValueOrDefault(remote);
                if (_pendingTotal >= _options.MaxPendingConnections || fromRemote >= Math.Max(1, _options.MaxPendingConnections / 4)) return false;
                _pending[remote] = fromRemote + 1;
                _pendingTotal++;
                return true;
            }
        }

        private void Release(IPAddress remote)
        {
            lock (_pending)
            {
                _pendingTotal--;
                if (--_pending[remote] == 0) _pending.Remove(remote);
            }
        }

        private async Task ServeAsync(Socket socket, IPEndPoint remote)
        {
            bool held = true;
            try
            {
                socket.NoDelay = true;
                if (!await IsRelayedAsync(socket).ConfigureAwait(false))
                {
                    Release(remote.Address);
                    held = false;
                    var context = _contexts.Create(socket);
                    if (!_forKestrel.Writer.TryWrite(context)) await context.DisposeAsync().ConfigureAwait(false);
                    return;
                }
                lock (_relayed) _relayed.Add(socket);
                try
                {
                    var preamble = await _relay.ReadPreambleAsync(socket, remote, _stopping.Token).ConfigureAwait(false);
                    Release(remote.Address);
                    held = false;
                    if (preamble is not null) await _relay.RelayAsync(socket, remote, preamble, _stopping.Token).ConfigureAwait(false);
                }
                finally
                {
                    lock (_relayed) _relayed.Remove(socket);
                    socket.Dispose();
                }
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                socket.Dispose();
            }
            finally
            {
                if (held) Release(remote.Address);
            }
        }

        /// <summary>
        /// Whether the connection begins with the relay magic, from its first two bytes, peeked within the preamble
        /// timeout (a connection that sends nothing in time is closed; a partial peek waits a little for the rest).
        /// </summary>
        private async Task<bool> IsRelayedAsync(Socket socket)
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
            deadline.CancelAfter(_options.PreambleTimeout);
            var start = new byte[2];
            while (true)
            {
                int peeked = await socket.ReceiveAsync(start, SocketFlags.Peek, deadline.Token).ConfigureAwait(false);
                if (peeked == 0) throw new SocketException((int)SocketError.ConnectionReset); // closed before a byte
                if (!RelayPreamble.MayStart(start.AsSpan(0, peeked))) return false;
                if (peeked == start.Length) return true;
                await Task.Delay(5, deadline.Token).ConfigureAwait(false);
            }
        }
    }
}
