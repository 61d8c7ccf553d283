using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Pmpi.Rpc.Server;

/// <summary>Configures Kestrel for PMPI's gRPC calls, which may stream for as long as a job runs.</summary>
public static class KestrelGrpcExtensions
{
    /// <summary>
    /// Lifts the limits that would cut long-lived or idle streams and widens HTTP/2 flow-control windows:
    /// MaxRequestBodySize (30 MB by default) and the minimum request/response data rates are removed; the
    /// connection window becomes 32 MB and the stream window 16 MB (defaults 1 MB / 768 KB), so a fast stream never
    /// waits on WINDOW_UPDATEs; keep-alive pings every 30 s detect a dead peer on an idle stream.
    /// </summary>
    public static KestrelServerOptions ConfigureForGrpc(this KestrelServerOptions kestrel)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        kestrel.AddServerHeader = false;
        kestrel.Limits.MaxRequestBodySize = null;
        kestrel.Limits.MinRequestBodyDataRate = null;
        kestrel.Limits.MinResponseDataRate = null;
        kestrel.Limits.Http2.InitialConnectionWindowSize = 32 * 1024 * 1024;
        kestrel.Limits.Http2.InitialStreamWindowSize = 16 * 1024 * 1024;
        kestrel.Limits.Http2.MaxStreamsPerConnection = 1000;
        kestrel.Limits.Http2.KeepAlivePingDelay = TimeSpan.FromSeconds(30);
        kestrel.Limits.Http2.KeepAlivePingTimeout = TimeSpan.FromSeconds(60);
        return kestrel;
    }

    /// <summary>
    /// Listens for cleartext HTTP/2 (h2c, prior knowledge: gRPC clients never upgrade from HTTP/1.1) on
    /// <paramref name="address"/>:<paramref name="port"/> (0 picks a free port), after <see cref="ConfigureForGrpc"/>.
    /// </summary>
    public static KestrelServerOptions ListenGrpc(this KestrelServerOptions kestrel, IPAddress address, int port)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentOutOfRangeException.ThrowIfNegative(port);
        kestrel.ConfigureForGrpc().Listen(address, port, listen => listen.Protocols = HttpProtocols.Http2);
        return kestrel;
    }
}
