namespace Pmpi.Rpc.Routing;

/// <summary>How a rank's messages reach a peer; <see cref="JobRoutes.Resolve"/> chooses it.</summary>
public enum RouteKind
{
    /// <summary>The rank itself: messages go straight into its own matching engine.</summary>
    Self,

    /// <summary>A stream dialed straight to the peer's endpoint: same domain, or the peer's domain declared reachable.</summary>
    Direct,

    /// <summary>Rings in memory both ranks map: the peer runs on the same node (Devices/SharedMemory).</summary>
    SharedMemory,

    /// <summary>
    /// A stream dialed to the sender's own domain's gateway, whose relay preamble names the destination rank: the
    /// gateway relays the connection to the peer's domain's gateway, which relays it to the peer, both as opaque bytes
    /// (the pair's own TLS and HTTP/2, end to end).
    /// </summary>
    Gateway,
}

/// <summary>The route from one rank to another.</summary>
/// <param name="Kind">Which way the messages go.</param>
/// <param name="From">The sending rank.</param>
/// <param name="To">The receiving rank.</param>
public readonly record struct Route(RouteKind Kind, RankPlace From, RankPlace To)
{
    /// <summary>The address the sender dials: the peer's endpoint, or its own domain's gateway; empty for <see cref="RouteKind.Self"/> and <see cref="RouteKind.SharedMemory"/>.</summary>
    public string Target => Kind switch
    {
        RouteKind.Direct => To.Endpoint,
        RouteKind.Gateway => From.Gateway,
        _ => "",
    };

    /// <summary>The route as <c>pmpi run --show-routes</c> prints it: "self", "shared memory", "direct", or "via gateways A -> B".</summary>
    public override string ToString() => Kind switch
    {
        RouteKind.Self => "self",
        RouteKind.SharedMemory => "shared memory",
        RouteKind.Direct => "direct",
        _ => $"via gateways {From.Gateway} -> {To.Gateway}",
    };
}
