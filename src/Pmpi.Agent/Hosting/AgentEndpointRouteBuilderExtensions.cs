using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Agent.Services;
using Pmpi.Rpc.Kestrel;

namespace Pmpi.Agent.Hosting;

/// <summary>Maps a PMPI agent's gRPC methods.</summary>
public static class AgentEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the Agent and Master services registered by <see cref="AgentServiceCollectionExtensions.AddPmpiAgent"/>,
    /// grpc.health.v1 and server reflection, and answers every other gRPC method with UNIMPLEMENTED.
    /// </summary>
    public static IEndpointRouteBuilder MapPmpiAgent(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        endpoints.ServiceProvider.GetRequiredService<AgentService>().Map(endpoints);
        endpoints.ServiceProvider.GetRequiredService<MasterService>().Map(endpoints);
        endpoints.MapGrpcHealthAndReflection();
        endpoints.MapGrpcUnimplemented();
        return endpoints;
    }
}
