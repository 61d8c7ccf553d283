using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;

namespace Pmpi.Agent.Hosting.Internal;

/// <summary>The address the agent's services answer on, read from the server once it has bound (port 0 included).</summary>
internal sealed class AgentEndpoint(IServer server)
{
    private Uri? _address;

    /// <exception cref="InvalidOperationException">The server has not bound yet.</exception>
    public Uri Address => _address ??= Resolve();

    private Uri Resolve()
    {
        var bound = server.Features.Get<IServerAddressesFeature>()?.Addresses.FirstOrDefault()
            ?? throw new InvalidOperationException("The agent's address is known only once its host has started.");
        // A wildcard bind is reachable on loopback; clients (and the ranks this master hands it to) need one they can dial.
        var dialable = bound.Replace("[::]", "127.0.0.1", StringComparison.Ordinal).Replace("0.0.0.0", "127.0.0.1", StringComparison.Ordinal);
        return new Uri(dialable);
    }
}
