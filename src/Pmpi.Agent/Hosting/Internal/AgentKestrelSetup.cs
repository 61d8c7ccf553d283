using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;
using Pmpi.Rpc;
using Pmpi.Rpc.Kestrel;

namespace Pmpi.Agent.Hosting.Internal;

/// <summary>
/// Makes the host's Kestrel listen for gRPC where <see cref="AgentOptions"/> says, with its security (TLS or h2c) and
/// the control plane's limits.
/// </summary>
internal sealed class AgentKestrelSetup(IOptions<AgentOptions> options) : IConfigureOptions<KestrelServerOptions>
{
    public void Configure(KestrelServerOptions kestrel)
    {
        // Reading Value runs the validator, so a bad address fails here with its message rather than in Parse.
        var agent = options.Value;
        // A master that stops answering pings for the heartbeat timeout ends its Launch calls, and so its ranks here.
        kestrel.ListenGrpc(IPAddress.Parse(agent.BindAddress), agent.Port, agent.Security, RpcServerLimits.ControlPlane with { PingTimeout = agent.HeartbeatTimeout });
    }
}
