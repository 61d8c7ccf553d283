using Microsoft.AspNetCore.Http;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Security.Internal;

namespace Pmpi.Rpc.Kestrel;

/// <summary>A daemon's check of its callers, with the <see cref="RpcSecurity"/> its listener serves.</summary>
public static class RpcSecurityExtensions
{
    /// <summary>
    /// Whether the caller of <paramref name="context"/> is a cluster member. <paramref name="failure"/> says why not,
    /// for the refusal and the log; it never contains a secret.
    /// </summary>
    public static bool TryAuthenticate(this RpcSecurity security, HttpContext context, out string failure)
    {
        ArgumentNullException.ThrowIfNull(security);
        ArgumentNullException.ThrowIfNull(context);
        var caller = new CallerEvidence(context.Request.Path.Value ?? "", context.Request.Headers[SignedRequestSecurity.Header].ToString(),
            context.Connection.ClientCertificate is not null);
        return security.TryAuthenticate(caller, out failure);
    }
}
