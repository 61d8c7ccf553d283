using System.Net;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Kestrel;

/// <summary>Configures Kestrel for PMPI's gRPC calls, which may stream for as long as a job runs.</summary>
public static class KestrelGrpcExtensions
{
    /// <summary>
    /// The meter on which a daemon counts what it refused (<c>pmpi.daemon.refusals</c>: calls without the credential,
    /// connections beyond the limits, TLS handshakes), by kind: no caller-chosen text, so its series stay few.
    /// </summary>
    public const string RefusalsMeterName = "Pmpi.Daemon";

    /// <summary>
    /// Lifts the limits that would cut long-lived or idle streams and applies <paramref name="limits"/>
    /// (<see cref="RpcServerLimits.Default"/> when null): MaxRequestBodySize (30 MB by default) and the minimum
    /// request/response data rates are removed, since an MPI stream may rightly idle for hours; the time to send
    /// headers and the time a connection may sit without a call are bounded instead, and HTTP/2 pings
    /// (<see cref="RpcServerLimits.PingDelay"/>, <see cref="RpcServerLimits.PingTimeout"/>) detect a dead or frozen
    /// peer on an idle stream. The number of connections is bounded by each listener <see cref="ListenGrpc"/> makes,
    /// which can close an unauthenticated connection to admit another where Kestrel's own limit could only refuse.
    /// </summary>
    public static KestrelServerOptions ConfigureForGrpc(this KestrelServerOptions kestrel, RpcServerLimits? limits = null)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        limits ??= RpcServerLimits.Default;
        kestrel.AddServerHeader = false;
        kestrel.Limits.MaxRequestBodySize = null;
        kestrel.Limits.MinRequestBodyDataRate = null;
        kestrel.Limits.MinResponseDataRate = null;
        kestrel.Limits.KeepAliveTimeout = limits.IdleTimeout;
        kestrel.Limits.RequestHeadersTimeout = limits.HeadersTimeout;
        kestrel.Limits.Http2.InitialConnectionWindowSize = limits.ConnectionWindowSize;
        kestrel.Limits.Http2.InitialStreamWindowSize = limits.StreamWindowSize;
        kestrel.Limits.Http2.MaxStreamsPerConnection = limits.MaxStreamsPerConnection;
        kestrel.Limits.Http2.KeepAlivePingDelay = limits.PingDelay;
        kestrel.Limits.Http2.KeepAlivePingTimeout = limits.PingTimeout;
        return kestrel;
    }

    /// <summary>
    /// Listens for HTTP/2 on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port), after
    /// <see cref="ConfigureForGrpc"/> with <paramref name="limits"/>, which also bound the listener's connections in
    /// total and per remote address, shedding unauthenticated ones first (<see cref="RpcServerLimits.AuthenticationTimeout"/>):
    /// over TLS with ALPN h2 when <paramref name="security"/> uses TLS, else cleartext h2c (prior knowledge: gRPC
    /// clients never upgrade from HTTP/1.1). Refused connections and TLS handshakes are logged, at most once per
    /// address and interval, in the log of the host the listener belongs to.
    /// </summary>
    /// <param name="kestrel">The server's options.</param>
    /// <param name="address">Where to listen.</param>
    /// <param name="port">The TCP port; 0 picks a free one.</param>
    /// <param name="security">The listener's TLS and who it accepts; <see cref="RpcSecurity.Insecure"/> when null.</param>
    /// <param name="limits">What callers may make the process hold; <see cref="RpcServerLimits.Default"/> when null.</param>
    /// <exception cref="ArgumentException"><paramref name="security"/> does not encrypt and <paramref name="address"/> is not loopback.</exception>
    public static KestrelServerOptions ListenGrpc(this KestrelServerOptions kestrel, IPAddress address, int port, RpcSecurity? security = null,
        RpcServerLimits? limits = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentOutOfRangeException.ThrowIfNegative(port);
        security ??= RpcSecurity.Insecure;
        security.CheckListenAddress(address);
        limits ??= RpcServerLimits.Default;
        var services = kestrel.ApplicationServices;
        var refusals = services?.GetService<RefusalLog>() ?? new RefusalLog(services?.GetService<ILoggerFactory>() ?? NullLoggerFactory.Instance);
        var admission = new ConnectionAdmission(limits, authenticates: security != RpcSecurity.Insecure, security.UsesTls, refusals);
        kestrel.ConfigureForGrpc(limits).Listen(address, port, listen =>
        {
            listen.Protocols = HttpProtocols.Http2;
            // Connections are counted before the TLS handshake, so a flood of handshakes is bounded too.
            listen.Use(admission.Admit);
            // Options per connection, so that a refused client certificate is logged with the connection it ended.
            if (security.DaemonListenerTls() is { } tls)
                listen.UseHttps(new TlsHandshakeCallbackOptions
                {
                    OnConnection = context => ValueTask.FromResult(tls(reason => ConnectionAdmission.RefusingCertificate(context.Connection, reason))),
                });
            listen.Use(admission.AfterHandshake);
        });
        return kestrel;
    }
}
