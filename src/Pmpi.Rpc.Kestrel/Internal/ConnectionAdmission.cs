using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>
/// Admits a listener's connections within <see cref="RpcServerLimits.MaxConnections"/> and
/// <see cref="RpcServerLimits.MaxConnectionsPerAddress"/> so that unauthenticated connections, however many, cannot
/// lock authenticated clients out (a local user holding 1,024 idle connections once locked every client of that
/// address out of an agent). A connection counts as unauthenticated until its caller proves itself: a client
/// certificate of the cluster in the TLS handshake (<see cref="AfterHandshake"/>), or a call that passed its check
/// (<see cref="AdmittedConnection.MarkAuthenticated"/>); one that has not within
/// <see cref="RpcServerLimits.AuthenticationTimeout"/> is closed. When a cap is reached, the oldest unauthenticated
/// connection of the address (or of the listener) is closed to make room, so a flood only churns its own
/// connections; a new connection is refused only when all those at the cap are authenticated. A listener that
/// authenticates nobody (<see cref="Security.RpcSecurity.Insecure"/>) counts every connection as authenticated.
/// Refusals, sheds and failed TLS handshakes are logged through the <see cref="RefusalLog"/>.
/// </summary>
/// <param name="limits">The caps and the authentication timeout.</param>
/// <param name="authenticates">Whether the listener's security proves callers at all.</param>
/// <param name="usesTls">Whether the listener speaks TLS, so that a connection sending anything else is refused here.</param>
/// <param name="refusals">Where refusals are logged.</param>
internal sealed class ConnectionAdmission(RpcServerLimits limits, bool authenticates, bool usesTls, RefusalLog refusals)
{
    private const byte TlsHandshakeRecord = 0x16;

    private readonly Dictionary<IPAddress, Address> _addresses = [];
    private readonly LinkedList<AdmittedConnection> _unauthenticated = []; // the listener's, oldest first
    private readonly Lock _lock = new();
    private int _open;

    /// <summary>The outer connection middleware: admits, sheds or refuses the connection before anything is read from it.</summary>
    public ConnectionDelegate Admit(ConnectionDelegate next) => async connection =>
    {
        if (connection.RemoteEndPoint is not IPEndPoint { Address: var remote })
        {
            await next(connection).ConfigureAwait(false);
            return;
        }
        var admitted = new AdmittedConnection(this, connection, remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote, authenticated: !authenticates);
        if (TryAdmit(admitted, out var shed) is { } refusal)
        {
            if (refusals.ShouldLog(admitted.Address, "connections over the limit")) ServerLog.ConnectionRefused(refusals.Logger, admitted.Peer, refusal);
            connection.Abort(new ConnectionAbortedException($"Refused: {refusal}."));
            return;
        }
        if (shed is not null)
        {
            if (refusals.ShouldLog(shed.Address, "unauthenticated connections closed for others"))
                ServerLog.ConnectionShed(refusals.Logger, shed.Peer, admitted.Peer, shed.Address.Equals(admitted.Address) ? "its address" : "the listener");
            shed.Connection.Abort(new ConnectionAbortedException("Closed to admit another connection: this one had not authenticated."));
        }
        connection.Features.Set(admitted);
        using var deadline = admitted.IsAuthenticated ? null : new CancellationTokenSource(limits.AuthenticationTimeout);
        using var expiry = deadline?.Token.UnsafeRegister(static state => Expire((AdmittedConnection)state!), admitted);
        try
        {
            if (usesTls && !await StartsWithTlsAsync(admitted).ConfigureAwait(false)) return;
            await next(connection).ConfigureAwait(false);
            if (usesTls && !admitted.Handshaken && !admitted.ClosedByAdmission)
                RefuseTls(admitted, admitted.TlsRefusal ?? "the handshake did not complete (the client broke it off, or it timed out)");
        }
        finally
        {
            Release(admitted);
        }
    };

    /// <summary>The inner connection middleware, after the TLS handshake: a client certificate (checked against the cluster CA in the handshake) authenticates.</summary>
    public ConnectionDelegate AfterHandshake(ConnectionDelegate next) => connection =>
    {
        if (connection.Features.Get<AdmittedConnection>() is { } admitted)
        {
            admitted.Handshaken = true;
            if (connection.Features.Get<ITlsConnectionFeature>()?.ClientCertificate is not null) admitted.Authenticate();
        }
        return next(connection);
    };

    /// <summary>Records why the listener's own certificate check refused the caller of <paramref name="connection"/>, for the log.</summary>
    public static void RefusingCertificate(ConnectionContext connection, string reason)
    {
        if (connection.Features.Get<AdmittedConnection>() is { } admitted) admitted.TlsRefusal = reason;
    }

    /// <summary>Closes a connection that has not authenticated within <see cref="RpcServerLimits.AuthenticationTimeout"/>.</summary>
    private static void Expire(AdmittedConnection connection)
    {
        if (connection.IsAuthenticated) return;
        connection.ClosedByAdmission = true;
        connection.Connection.Abort(new ConnectionAbortedException("No call authenticated the connection in time (RpcServerLimits.AuthenticationTimeout)."));
    }

    /// <summary>Moves <paramref name="connection"/> out of the unauthenticated, so it is neither shed nor timed out.</summary>
    internal void Authenticated(AdmittedConnection connection)
    {
        lock (_lock)
        {
            if (connection.IsAuthenticated) return;
            connection.SetAuthenticated();
            if (connection.Released) return;
            _unauthenticated.Remove(connection.InListener);
            _addresses[connection.Address].Unauthenticated.Remove(connection.InAddress);
        }
    }

    /// <summary>
    /// Counts the connection in, after closing the oldest unauthenticated one at a full cap (<paramref name="shed"/>,
    /// which the caller aborts); or says why not, when every connection at the cap is authenticated.
    /// </summary>
    private string? TryAdmit(AdmittedConnection connection, out AdmittedConnection? shed)
    {
        shed = null;
        lock (_lock)
        {
            int fromAddress = _addresses.TryGetValue(connection.Address, out var address) ? address.Open : 0;
            if (fromAddress >= limits.MaxConnectionsPerAddress)
            {
                shed = address!.Unauthenticated.First?.Value;
                if (shed is null) return $"{connection.Address} holds {limits.MaxConnectionsPerAddress} authenticated connections (RpcServerLimits.MaxConnectionsPerAddress)";
            }
            else if (_open >= limits.MaxConnections)
            {
                shed = _unauthenticated.First?.Value;
                if (shed is null) return $"the listener holds {limits.MaxConnections} authenticated connections (RpcServerLimits.MaxConnections)";
            }
            if (shed is not null)
            {
                shed.ClosedByAdmission = true;
                ReleaseLocked(shed);
            }
            if (!_addresses.TryGetValue(connection.Address, out address)) _addresses[connection.Address] = address = new Address();
            address.Open++;
            _open++;
            if (!connection.IsAuthenticated)
            {
                _unauthenticated.AddLast(connection.InListener);
                address.Unauthenticated.AddLast(connection.InAddress);
            }
            return null;
        }
    }

    private void Release(AdmittedConnection connection)
    {
        lock (_lock) ReleaseLocked(connection);
    }

    private void ReleaseLocked(AdmittedConnection connection)
    {
        if (connection.Released) return;
        connection.Released = true;
        _open--;
        var address = _addresses[connection.Address];
        if (connection.InListener.List is not null) _unauthenticated.Remove(connection.InListener);
        if (connection.InAddress.List is not null) address.Unauthenticated.Remove(connection.InAddress);
        if (--address.Open == 0) _addresses.Remove(connection.Address);
    }

    /// <summary>
    /// Whether the connection's first byte opens a TLS handshake record; a connection that sends something else
    /// (cleartext to a TLS port) is refused and logged, one that closes without a byte (a port probe) only closed.
    /// Nothing is consumed: the TLS layer reads the same bytes.
    /// </summary>
    private async Task<bool> StartsWithTlsAsync(AdmittedConnection admitted)
    {
        var input = admitted.Connection.Transport.Input;
        ReadResult read;
        try
        {
            read = await input.ReadAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or OperationCanceledException)
        {
            return false; // closed before a byte, by the peer or by the admission
        }
        if (read.Buffer.IsEmpty)
        {
            input.AdvanceTo(read.Buffer.Start);
            return false;
        }
        byte first = read.Buffer.FirstSpan[0];
        input.AdvanceTo(read.Buffer.Start);
        if (first == TlsHandshakeRecord) return true;
        RefuseTls(admitted, "it sent no TLS handshake (cleartext to a TLS port?)");
        return false;
    }

    private void RefuseTls(AdmittedConnection admitted, string reason)
    {
        if (refusals.ShouldLog(admitted.Address, "TLS handshakes")) ServerLog.TlsRefused(refusals.Logger, admitted.Peer, reason);
    }

    private sealed class Address
    {
        public int Open { get; set; }

        public LinkedList<AdmittedConnection> Unauthenticated { get; } = [];
    }
}
