using System.Net;
using Pmpi.Agent.NodeInfo;
using Pmpi.Rpc.Server;

namespace Pmpi.Agent.Services;

/// <summary>
/// A running agent: the Agent and Master services on one gRPC endpoint. `pmpi agent` runs one as a daemon;
/// `pmpi run` without a master starts one in-process (the embedded default) and submits to it.
/// </summary>
public sealed class AgentHost : IAsyncDisposable
{
    private readonly RpcServer _server;
    private readonly AgentService _agent;

    private AgentHost(RpcServer server, AgentService agent)
    {
        _server = server;
        _agent = agent;
    }

    /// <summary>Where the services listen, e.g. http://127.0.0.1:7300.</summary>
    public Uri Address => _server.Address;

    /// <summary>Starts the services on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port).</summary>
    public static async Task<AgentHost> StartAsync(IPAddress address, int port, AgentOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        var agent = new AgentService(options, NodeInfoProviderFactory.Create());
        RpcServer? server = null;
        var master = new MasterService(() => server!.Address, () => server!.Address);
        server = await RpcServer.StartAsync(address, port, endpoints =>
        {
            agent.Map(endpoints);
            master.Map(endpoints);
        }, cancellationToken: cancellationToken).ConfigureAwait(false);
        return new AgentHost(server, agent);
    }

    /// <summary>Stops serving and kills every rank this agent launched.</summary>
    public async ValueTask DisposeAsync()
    {
        _agent.KillAll();
        await _server.DisposeAsync().ConfigureAwait(false);
    }
}
