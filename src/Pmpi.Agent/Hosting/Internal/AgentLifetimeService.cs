using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Internal;
using Pmpi.Agent.Node;

namespace Pmpi.Agent.Hosting.Internal;

/// <summary>
/// Ties the agent's ranks to the host's life: reports the bound address once serving, and on shutdown kills every
/// rank it launched. Killing at ApplicationStopping, before the server drains, lets each Launch call end with its
/// ranks' exits instead of waiting out the shutdown timeout; killing again in StopAsync, after the server stopped,
/// catches a rank launched while it drained.
/// </summary>
internal sealed class AgentLifetimeService(IHostApplicationLifetime lifetime, AgentService agent, AgentEndpoint endpoint,
    IOptions<AgentOptions> options, ILogger<AgentLifetimeService> logger) : IHostedService
{
    private CancellationTokenRegistration _started, _stopping;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _started = lifetime.ApplicationStarted.Register(() =>
        {
            var agentOptions = options.Value;
            AgentLog.Listening(logger, endpoint.Address, agentOptions.Slots, agentOptions.Domain ?? "(none)", agentOptions.RankBindAddress);
            if (agentOptions.Security == Rpc.Security.RpcSecurity.Insecure) AgentLog.Insecure(logger, endpoint.Address);
        });
        _stopping = lifetime.ApplicationStopping.Register(() =>
        {
            AgentLog.ShuttingDown(logger, agent.JobCount);
            agent.KillAll();
        });
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        agent.KillAll();
        _started.Dispose();
        _stopping.Dispose();
        return Task.CompletedTask;
    }
}
