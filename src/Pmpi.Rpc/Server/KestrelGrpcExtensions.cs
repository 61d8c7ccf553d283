using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Pmpi.Rpc.Security;

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
    /// Listens for HTTP/2 on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port), after
    /// <see cref="ConfigureForGrpc"/>: over TLS with ALPN h2 when <paramref name="security"/> uses TLS, else cleartext
    /// h2c (prior knowledge: gRPC clients never upgrade from HTTP/1.1).
    /// </summary>
    /// <param name="kestrel">The server's options.</param>
    /// <param name="address">Where to listen.</param>
    /// <param name="port">The TCP port; 0 picks a free one.</param>
    /// <param name="security">The listener's TLS and who it accepts; <see cref="RpcSecurity.Insecure"/> when null.</param>
    /// <exception cref="ArgumentException"><paramref name="security"/> does not encrypt and <paramref name="address"/> is not loopback.</exception>
    public static KestrelServerOptions ListenGrpc(this KestrelServerOptions kestrel, IPAddress address, int port, RpcSecurity? security = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentOutOfRangeException.ThrowIfNegative(port);
        security ??= RpcSecurity.Insecure;
        security.CheckListenAddress(address);
        kestrel.ConfigureForGrpc().Listen(address, port, listen =>
        {
            listen.Protocols = HttpProtocols.Http2;
            security.ConfigureListener(listen);
        });
        return kestrel;
    }
}
