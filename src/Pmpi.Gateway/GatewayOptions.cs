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
    /// How long a relayed rank stream may carry no byte either way (the ranks' HTTP/2 pings included) before the
    /// gateway closes it, and a control call it forwards may carry none (YARP's activity timeout, which HTTP/2 pings do
    /// not reset). Defaults to 24 hours, so idle streams outlive long compute phases; a dead peer is found sooner by
    /// the ranks' pings.
    /// </summary>
    public TimeSpan StreamIdleTimeout { get; set; } = TimeSpan.FromHours(24);

    /// <summary>
    /// How many jobs may be registered at once; one more is refused with RESOURCE_EXHAUSTED, so no caller can make the
    /// gateway hold tables without bound. Defaults to 4,096.
    /// </summary>
    public int MaxJobs { get; set; } = 4096;

    /// <summary>
    /// How many rank streams the gateway relays at once (each holds two connections and two 64 KB buffers); one more
    /// is refused with RESOURCE_EXHAUSTED. Defaults to 2,048.
    /// </summary>
    public int MaxRelayedStreams { get; set; } = 2048;

    /// <summary>
    /// How many accepted connections may be waiting at once for their first bytes (which say whether Kestrel or the
    /// relay serves them) or for a whole relay preamble, a quarter of them from one address; more are closed at once, so
    /// silent connections cannot hold the gateway. Defaults to 512.
    /// </summary>
    public int MaxPendingConnections { get; set; } = 512;

    /// <summary>
    /// How long a new connection may take to send its first bytes and, for a relayed stream, its whole preamble,
    /// before it is closed. Defaults to 10 seconds.
    /// </summary>
    public TimeSpan PreambleTimeout { get; set; } = TimeSpan.FromSeconds(10);

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
        if (MaxRelayedStreams < 1) yield return $"MaxRelayedStreams: {MaxRelayedStreams} is below 1.";
        if (MaxPendingConnections < 4) yield return $"MaxPendingConnections: {MaxPendingConnections} is below 4.";
        if (PreambleTimeout <= TimeSpan.Zero) yield return $"PreambleTimeout: {PreambleTimeout} is not positive.";
        if (StreamIdleTimeout <= TimeSpan.Zero) yield return $"--stream-idle-timeout: {StreamIdleTimeout} is not positive.";
        foreach (var peer in DialOut.Where(peer => !Uri.TryCreate($"https://{peer}", UriKind.Absolute, out var uri) || uri.Port is < 1 or > 65535 || uri.AbsolutePath != "/"))
            yield return $"--dial-out: '{peer}' is not a gateway's host:port.";
    }
}
