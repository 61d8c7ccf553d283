using System.Diagnostics.Metrics;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Hosting.Internal;
using Pmpi.Agent.Internal;
using Pmpi.Agent.NodeInfo;
using Pmpi.Agent.Master;
using Pmpi.Agent.Node;
using Pmpi.Agent.Staging;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Hosting;

/// <summary>Registers a PMPI agent (the Agent, Master and JobControl gRPC services) in an ASP.NET Core host.</summary>
public static class AgentServiceCollectionExtensions
{
    /// <summary>
    /// Adds the agent's services, its Kestrel gRPC endpoint (<see cref="AgentOptions.BindAddress"/>:<see cref="AgentOptions.Port"/>)
    /// and a hosted service that kills every rank the agent launched when the host stops. Options are validated when
    /// the host starts. <see cref="INodeInfoProvider"/> defaults to the one for this operating system; register
    /// another before this call to replace it. Map the services with
    /// <see cref="AgentEndpointRouteBuilderExtensions.MapPmpiAgent"/>.
    /// </summary>
    /// <param name="services">The host's services.</param>
    /// <param name="configure">Sets the agent's options; the defaults stand where it sets nothing.</param>
    public static IServiceCollection AddPmpiAgent(this IServiceCollection services, Action<AgentOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = services.AddOptions<AgentOptions>();
        if (configure is not null) options.Configure(configure);
        options.ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<AgentOptions>, AgentOptionsValidator>());

        services.TryAddSingleton(_ => NodeInfoProviderFactory.Create());
        services.TryAddSingleton<AgentEndpoint>();
        // One count of refusals for the calls and the listener (connections, TLS handshakes), which finds it here.
        RefusalLog.TryAddTo(services);
        services.AddDaemonGrpc([.. AgentReflection.Descriptor.Services, .. MasterReflection.Descriptor.Services])
            .AddMethodTable<AgentService>(Rpc.V1.Agent.Descriptor, table => table
                .Unary<NodeInfoRequest, Rpc.V1.NodeInfo>("GetNodeInfo", (agent, request, context) => agent.GetNodeInfo(request, context))
                .ServerStreaming<LaunchRequest, LaunchEvent>("Launch", (agent, request, events, context) => agent.Launch(request, events, context))
                .Unary<KillRequest, KillReply>("Kill", (agent, request, context) => agent.Kill(request, context))
                .Unary<StagedProgram, MissingFilesReply>("MissingFiles", (agent, request, context) => agent.MissingFiles(request, context))
                .ClientStreaming<FileChunk, UploadReply>("Upload", (agent, chunks, context) => agent.Upload(chunks, context)))
            .AddMethodTable<MasterService>(Rpc.V1.Master.Descriptor, table => table
                .ServerStreaming<SubmitRequest, JobEvent>("Submit", (master, request, events, context) => master.Submit(request, events, context)))
            .AddMethodTable<JobControlService>(JobControl.Descriptor, table => table
                .Unary<RegisterRequest, RankTable>("Register", (control, request, context) => control.Register(request, context))
                .Unary<AbortRequest, AbortReply>("Abort", (control, request, context) => control.Abort(request, context))
                .Unary<SpawnRequest, RankTable>("Spawn", (control, request, context) => control.Spawn(request, context))
                .Unary<LinkedRequest, LinkedReply>("Linked", (control, request, context) => control.Linked(request, context)))
            .AddServiceOptions<AgentService>(service => service.MaxReceiveMessageSize = AgentService.MaxRequestSize)
            .AddServiceOptions<MasterService>(service => service.MaxReceiveMessageSize = MasterService.MaxRequestSize)
            .AddServiceOptions<JobControlService>(service => service.MaxReceiveMessageSize = JobControlService.MaxRequestSize);
        // Reading the options runs the validator, which refuses a host without a security.
        services.TryAddSingleton(provider => new CallGuard(provider.GetRequiredService<IOptions<AgentOptions>>().Value.Security!,
            provider.GetRequiredService<RefusalLog>(), provider.GetRequiredService<ILogger<CallGuard>>()));
        services.TryAddSingleton(provider => new AgentMeters(provider.GetRequiredService<IMeterFactory>()));
        services.TryAddSingleton(provider =>
        {
            var options = provider.GetRequiredService<IOptions<AgentOptions>>().Value;
            return new ProgramCache(options.StagingDirectory, options.KeepStaged, options.StagingLimit);
        });
        services.TryAddSingleton(provider => new AgentService(provider.GetRequiredService<IOptions<AgentOptions>>().Value,
            provider.GetRequiredService<INodeInfoProvider>(), provider.GetRequiredService<CallGuard>(), provider.GetRequiredService<AgentMeters>(),
            provider.GetRequiredService<ProgramCache>(), provider.GetRequiredService<ILogger<AgentService>>()));
        services.TryAddSingleton(provider =>
        {
            // This host is both master (ranks anywhere dial its advertised address) and the agent for computations
            // that name no nodes (the embedded default; dialled from this machine).
            var endpoint = provider.GetRequiredService<AgentEndpoint>();
            return new MasterService(() => endpoint.AdvertisedAddress, () => endpoint.Address, provider.GetRequiredService<RunningJobs>(),
                provider.GetRequiredService<CallGuard>(), provider.GetRequiredService<ProgramCache>(), provider.GetRequiredService<IOptions<AgentOptions>>().Value);
        });
        services.TryAddSingleton<RunningJobs>();
        services.TryAddSingleton<JobControlService>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<KestrelServerOptions>, AgentKestrelSetup>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, AgentLifetimeService>());
        return services;
    }
}
