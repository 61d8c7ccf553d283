using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.Security;

namespace Pmpi.Agent.Internal;

/// <summary>
/// The one place the agent's and master's methods refuse a caller: every refusal becomes the call's status and is
/// logged with the method, the peer's address and the reason (never a secret), the first of each address, method and
/// status per interval in full and the rest as a count (<see cref="RefusalLog"/>), so a caller refused over and over
/// cannot flood the log.
/// </summary>
internal sealed class CallGuard(RpcSecurity security, RefusalLog refusals, ILogger<CallGuard> logger)
{
    /// <summary>The security the endpoint runs with.</summary>
    public RpcSecurity Security => security;

    /// <summary>Refuses the call with UNAUTHENTICATED unless its caller is a cluster member (<see cref="CallerChecks.RequireCaller"/>).</summary>
    public void RequireMember(HttpContext call, string method)
    {
        if (!security.TryAuthenticate(call, out var failure)) throw Refuse(call, method, StatusCode.Unauthenticated, failure);
    }

    /// <summary>Logs the refusal (or counts it) and returns the exception that ends the call with <paramref name="code"/>.</summary>
    public RpcException Refuse(HttpContext call, string method, StatusCode code, string reason)
    {
        reason = LogText.Printable(reason);
        if (refusals.ShouldLog(call.Connection.RemoteIpAddress, $"{method} calls ({code})")) AgentLog.CallRefused(logger, method, call.Peer(), reason);
        return new RpcException(new Status(code, $"{method} refused: {reason}."));
    }
}
