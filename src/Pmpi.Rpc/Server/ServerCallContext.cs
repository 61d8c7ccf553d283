using Microsoft.AspNetCore.Http;

namespace Pmpi.Rpc.Server;

/// <summary>What a handler knows about its call: cancellation (client gone or deadline passed) and the HTTP context.</summary>
public sealed class ServerCallContext(HttpContext httpContext, CancellationToken cancellationToken)
{
    /// <summary>Cancelled when the client goes away or the call's grpc-timeout passes.</summary>
    public CancellationToken CancellationToken { get; } = cancellationToken;

    /// <summary>The underlying HTTP/2 request.</summary>
    public HttpContext HttpContext { get; } = httpContext;

    /// <summary>The client's address, for logs and errors.</summary>
    public string Peer => $"{HttpContext.Connection.RemoteIpAddress}:{HttpContext.Connection.RemotePort}";
}
