using System.Net;
using Microsoft.AspNetCore.Connections;

namespace Pmpi.Rpc.Server.Internal;

/// <summary>
/// Connection middleware that closes a new connection at once when its remote address already holds
/// <see cref="RpcServerLimits.MaxConnectionsPerAddress"/>, so one host cannot take all of a listener's connections.
/// </summary>
internal sealed class ConnectionsPerAddress(int limit)
{
    private readonly Dictionary<IPAddress, int> _open = [];
    private readonly Lock _lock = new();

    public ConnectionDelegate Wrap(ConnectionDelegate next) => async connection =>
    {
        if (connection.RemoteEndPoint is not IPEndPoint { Address: var remote })
        {
            await next(connection).ConfigureAwait(false);
            return;
        }
        var address = remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote;
        if (!TryOpen(address))
        {
            connection.Abort(new ConnectionAbortedException($"{address} already holds {limit} connections (RpcServerLimits.MaxConnectionsPerAddress)."));
            return;
        }
        try
        {
            await next(connection).ConfigureAwait(false);
        }
        finally
        {
            Close(address);
        }
    };

    private bool TryOpen(IPAddress address)
    {
        lock (_lock)
        {
            int open = _open.GetValueOrDefault(address);
            if (open >= limit) return false;
            _open[address] = open + 1;
            return true;
        }
    }

    private void Close(IPAddress address)
    {
        lock (_lock)
        {
            if (--_open[address] == 0) _open.Remove(address);
        }
    }
}
