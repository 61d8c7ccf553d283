using Pmpi.Rpc.Security;

namespace Pmpi.Agent.Services;

/// <summary>
/// Where an agent listens and how it presents its node. Checked when the agent starts: a bad value stops it with an
/// <see cref="Microsoft.Extensions.Options.OptionsValidationException"/> naming the option.
/// </summary>
public sealed class AgentOptions
{
    /// <summary>
    /// The IP address the Agent and Master services listen on. Defaults to 127.0.0.1 (this machine only); 0.0.0.0 or
    /// :: listens on every interface, as an agent other nodes call must.
    /// </summary>
    public string BindAddress { get; set; } = "127.0.0.1";

    /// <summary>The TCP port the services listen on, 0 to pick a free one. Defaults to 7300.</summary>
    public int Port { get; set; } = 7300;

    /// <summary>The node's administrative domain. Defaults to null: no domain.</summary>
    public string? Domain { get; set; }

    /// <summary>Ranks this node takes before it is oversubscribed, at least 1. Defaults to the number of logical cores.</summary>
    public int Slots { get; set; } = System.Environment.ProcessorCount;

    /// <summary>
    /// The IP address rank endpoints listen on and advertise to their peers: an address of this node that the other
    /// nodes reach. Defaults to 127.0.0.1, which serves jobs whose ranks all run on this machine.
    /// </summary>
    public string RankBindAddress { get; set; } = "127.0.0.1";

    /// <summary>
    /// How callers prove they belong to the cluster and how traffic is protected: <see cref="RpcSecurity.MutualTls"/>
    /// with the cluster credential for a daemon, <see cref="RpcSecurity.ForThisProcess"/> for an embedded agent on
    /// loopback, <see cref="RpcSecurity.Insecure"/> only when asked for. Defaults to null, which the validator refuses:
    /// an agent never starts unauthenticated by accident.
    /// </summary>
    public RpcSecurity? Security { get; set; }
}
