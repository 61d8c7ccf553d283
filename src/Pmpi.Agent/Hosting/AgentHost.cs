using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Pmpi.Agent.Hosting.Internal;
using Pmpi.Rpc.Kestrel;

namespace Pmpi.Agent.Hosting;

/// <summary>
/// A running agent: a Generic Host (ASP.NET Core's WebApplication) serving the Agent and Master services on one
/// gRPC endpoint. `pmpi agent` runs one as a daemon; `pmpi run` without a master starts one in-process on a free
/// loopback port (the embedded default) and submits to it. Stopping it kills every rank it launched.
/// </summary>
public sealed class AgentHost : IAsyncDisposable
{
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(10);

    private readonly WebApplication _app;
    private int _disposed;

    private AgentHost(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
    }

    /// <summary>Where the services listen, e.g. https://127.0.0.1:7300 (the real port when 0 was asked for).</summary>
    public Uri Address { get; }

    /// <summary>The agent's meter (System.Diagnostics.Metrics): launches and ranks running, ranks started and exited, launches refused.</summary>
    public const string MeterName = "Pmpi.Agent";

    /// <summary>The host's services.</summary>
    public IServiceProvider Services => _app.Services;

    /// <summary>Starts the services on <paramref name="address"/>:<paramref name="port"/> (0 picks a free port), logging nothing.</summary>
    /// <exception cref="Microsoft.Extensions.Options.OptionsValidationException"><paramref name="options"/> holds a bad value.</exception>
    public static Task<AgentHost> StartAsync(IPAddress address, int port, AgentOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(options);
        return StartAsync(agent =>
        {
            agent.BindAddress = address.ToString();
            agent.Port = port;
            agent.Domain = options.Domain;
            agent.Gateway = options.Gateway;
            agent.Slots = options.Slots;
            agent.RankBindAddress = options.RankBindAddress;
            agent.Security = options.Security;
            agent.HeartbeatTimeout = options.HeartbeatTimeout;
            agent.RegistrationTimeout = options.RegistrationTimeout;
            agent.RankZeroInput = options.RankZeroInput;
        }, configureHost: null, cancellationToken);
    }

    /// <summary>Builds and starts an agent host.</summary>
    /// <param name="configureAgent">Sets the agent's options (<see cref="AgentOptions"/> states the defaults).</param>
    /// <param name="configureHost">
    /// Adjusts the host before it is built: logging providers (none by default, so an embedded agent prints nothing),
    /// a service manager's lifetime, replacement services such as another <see cref="NodeInfo.INodeInfoProvider"/>.
    /// </param>
    /// <param name="cancellationToken">Abandons the start.</param>
    /// <exception cref="Microsoft.Extensions.Options.OptionsValidationException">An option holds a bad value; the failures name it.</exception>
    /// <exception cref="IOException">The endpoint could not be bound (e.g. the port is taken).</exception>
    public static async Task<AgentHost> StartAsync(Action<AgentOptions> configureAgent, Action<IHostApplicationBuilder>? configureHost = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(configureAgent);
        var builder = RpcServer.CreateBuilder();
        builder.Services.AddPmpiAgent(configureAgent);
        configureHost?.Invoke(builder);
        var app = builder.Build();
        try
        {
            app.MapPmpiAgent();
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
            return new AgentHost(app, app.Services.GetRequiredService<AgentEndpoint>().Address);
        }
        catch
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Whether the host has been asked to stop (see <see cref="WaitForShutdownRequestAsync"/>).</summary>
    public bool ShutdownRequested => _app.Lifetime.ApplicationStopping.IsCancellationRequested;

    /// <summary>
    /// Completes when the host is asked to stop: SIGTERM, Ctrl+C, the service manager, or
    /// <see cref="IHostApplicationLifetime.StopApplication"/>. The ranks are being killed by then; dispose to finish stopping.
    /// </summary>
    public Task WaitForShutdownRequestAsync(CancellationToken cancellationToken = default) => _app.Lifetime.WaitForStopRequestAsync(cancellationToken);

    /// <summary>
    /// Stops every rank this agent runs where it is (on Linux, SIGSTOP to each rank's process group), their silence not
    /// taken for a hang, until <see cref="ContinueRanks"/>: how `pmpi run` suspends its job on Ctrl-Z.
    /// </summary>
    public void SuspendRanks() => _app.Services.GetRequiredService<Node.AgentService>().SuspendAll();

    /// <summary>Lets the ranks <see cref="SuspendRanks"/> stopped go on.</summary>
    public void ContinueRanks() => _app.Services.GetRequiredService<Node.AgentService>().ContinueAll();

    /// <summary>Kills every rank this agent launched, stops serving (running calls get up to 10 s) and releases the host.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        using var grace = new CancellationTokenSource(StopTimeout);
        await _app.StopAsync(grace.Token).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
