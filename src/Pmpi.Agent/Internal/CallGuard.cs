using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Server;

namespace Pmpi.Agent.Internal;

/// <summary>
/// The one place the agent's and master's methods refuse a caller: every refusal is logged with the method, the
/// peer's address and the reason (never a secret), and becomes the call's status.
/// </summary>
internal sealed class CallGuard(RpcSecurity security, ILogger<CallGuard> logger)
{
    /// <summary>The security the endpoint runs with.</summary>
    public RpcSecurity Security => security;

    /// <summary>Refuses the call with UNAUTHENTICATED unless its caller is a cluster member.</summary>
    public void RequireMember(ServerCallContext call, string method)
    {
        if (!security.TryAuthenticate(call.HttpContext, out var failure)) throw Refuse(call, method, StatusCode.Unauthenticated, failure);
    }

    /// <summary>Logs the refusal and returns the exception that ends the call with <paramref name="code"/>.</summary>
    public RpcException Refuse(ServerCallContext call, string method, StatusCode code, string reason)
    {
        reason = LogText.Printable(reason);
        AgentLog.CallRefused(logger, method, call.Peer, reason);
        return new RpcException(code, $"{method} refused: {reason}.");
    }
}
