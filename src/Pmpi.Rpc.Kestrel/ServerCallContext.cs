using Microsoft.AspNetCore.Http;

namespace Pmpi.Rpc.Kestrel;

/// <summary>What a handler knows about its call: cancellation (client gone or deadline passed) and the HTTP context.</summary>
public sealed class ServerCallContext
{
    internal ServerCallContext(HttpContext httpContext, DateTimeOffset? deadline, CancellationToken cancellationToken)
    {
        HttpContext = httpContext;
        Deadline = deadline;
        CancellationToken = cancellationToken;
    }

    /// <summary>Cancelled when the client goes away or the call's grpc-timeout passes.</summary>
    public CancellationToken CancellationToken { get; }

    /// <summary>When the call's grpc-timeout ends it; null when the client set none.</summary>
    public DateTimeOffset? Deadline { get; }

    /// <summary>The underlying HTTP/2 request (headers, connection), for what this class does not expose.</summary>
    public HttpContext HttpContext { get; }

    /// <summary>The client's address, for logs and errors.</summary>
    public string Peer => $"{HttpContext.Connection.RemoteIpAddress}:{HttpContext.Connection.RemotePort}";
}
