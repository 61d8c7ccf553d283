using System.Net;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Options;

namespace Pmpi.Agent.Hosting.Internal;

/// <summary>The addresses the agent's services answer on, read from the server once it has bound (port 0 included).</summary>
internal sealed class AgentEndpoint(IServer server, IOptions<AgentOptions> options)
{
    private Uri? _address, _advertised;

    /// <summary>An address this machine dials: a wildcard bind (0.0.0.0, ::) becomes 127.0.0.1.</summary>
    /// <exception cref="InvalidOperationException">The server has not bound yet.</exception>
    public Uri Address => _address ??= Bound(IPAddress.Loopback.ToString());

    /// <summary>
    /// The master's address handed to ranks, which may run on other nodes: a wildcard bind becomes
    /// <see cref="AgentOptions.RankBindAddress"/>, the address of this node the other nodes reach.
    /// </summary>
    public Uri AdvertisedAddress => _advertised ??= Bound(options.Value.RankBindAddress);

    private Uri Bound(string wildcardReplacement)
    {
        var bound = new Uri(server.Features.Get<IServerAddressesFeature>()?.Addresses.FirstOrDefault()
            ?? throw new InvalidOperationException("The agent's address is known only once its host has started."));
        if (!IPAddress.TryParse(bound.Host.Trim('[', ']'), out var host) || !(host.Equals(IPAddress.Any) || host.Equals(IPAddress.IPv6Any))) return bound;
        var replacement = IPAddress.Parse(wildcardReplacement);
        return new UriBuilder(bound) { Host = replacement.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? $"[{replacement}]" : replacement.ToString() }.Uri;
    }
}
