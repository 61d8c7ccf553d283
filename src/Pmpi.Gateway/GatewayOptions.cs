using Pmpi.Rpc.Security;

namespace Pmpi.Gateway;

/// <summary>What a domain's gateway serves and how; <c>pmpi gateway</c> sets them from its flags.</summary>
public sealed class GatewayOptions
{
    /// <summary>The administrative domain whose ranks this gateway relays for (<c>--domain</c>); required.</summary>
    public string Domain { get; set; } = "";

    /// <summary>IP address to listen on (<c>--bind</c>). Defaults to 0.0.0.0: a gateway is reached from other networks.</summary>
    public string BindAddress { get; set; } = "0.0.0.0";

    /// <summary>TCP port (<c>--port</c>); 0 picks a free one. Defaults to 7400.</summary>
    public int Port { get; set; } = 7400;

    /// <summary>
    /// TLS and who is accepted: <see cref="RpcSecurity.MutualTls"/> with the cluster credential, or
    /// <see cref="RpcSecurity.Insecure"/> (<c>--insecure</c>, loopback or a network the user alone controls). No default.
    /// </summary>
    public RpcSecurity? Security { get; set; }

    /// <summary>
    /// How long a relayed stream may carry no byte either way before the gateway ends it (YARP's activity timeout, set
    /// on every forwarded call; HTTP/2 pings do not reset it). Defaults to 24 hours, so idle streams outlive long
    /// compute phases; a dead peer is found sooner by HTTP/2 pings.
    /// </summary>
    public TimeSpan StreamIdleTimeout { get; set; } = TimeSpan.FromHours(24);

    /// <summary>
    /// How many jobs may be registered at once; one more is refused with RESOURCE_EXHAUSTED, so no caller can make the
    /// gateway hold tables without bound. Defaults to 4,096.
    /// </summary>
    public int MaxJobs { get; set; } = 4096;

    /// <summary>
    /// Peer gateways (host:port) that cannot dial this one, because it sits behind NAT or a firewall that lets no
    /// connection in (<c>--dial-out</c>, repeatable): this gateway keeps a call parked at each, inside which the peer
    /// runs its connections to this one. Empty by default: peers dial this gateway directly.
    /// </summary>
    public IList<string> DialOut { get; } = [];

    /// <summary>The problems with these options, each naming the flag to change; empty when valid.</summary>
    public IEnumerable<string> Problems()
    {
        if (string.IsNullOrWhiteSpace(Domain)) yield return "--domain: a gateway serves one domain; name it as the computation files do.";
        if (!System.Net.IPAddress.TryParse(BindAddress, out _)) yield return $"--bind: '{BindAddress}' is not an IP address.";
        if (Port is < 0 or > 65535) yield return $"--port: {Port} is not a TCP port (0-65535).";
        if (Security is null) yield return "--credentials: no cluster credential (or --insecure).";
        if (MaxJobs < 1) yield return $"MaxJobs: {MaxJobs} is below 1.";
        if (StreamIdleTimeout <= TimeSpan.Zero) yield return $"--stream-idle-timeout: {StreamIdleTimeout} is not positive.";
        foreach (var peer in DialOut.Where(peer => !Uri.TryCreate($"https://{peer}", UriKind.Absolute, out var uri) || uri.Port is < 1 or > 65535 || uri.AbsolutePath != "/"))
            yield return $"--dial-out: '{peer}' is not a gateway's host:port.";
    }
}
