using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Agent.Internal;
using Pmpi.Agent.Master;
using Pmpi.Agent.Node;
using Pmpi.Rpc.Kestrel;

namespace Pmpi.Agent.Hosting;

/// <summary>Maps a PMPI agent's gRPC methods.</summary>
public static class AgentEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the Agent, Master and JobControl services registered by <see cref="AgentServiceCollectionExtensions.AddPmpiAgent"/>,
    /// grpc.health.v1 and server reflection; gRPC for .NET answers every other gRPC method with UNIMPLEMENTED.
    /// </summary>
    public static IEndpointRouteBuilder MapPmpiAgent(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        var guard = endpoints.ServiceProvider.GetRequiredService<CallGuard>();
        // Agent and Master are for cluster members, checked before a request byte is read; JobControl's callers are
        // ranks, which prove their job with the key inside each request.
        endpoints.MapGrpcService<AgentService>().RequireCaller(guard.RequireMember);
        endpoints.MapGrpcService<MasterService>().RequireCaller(guard.RequireMember);
        endpoints.MapGrpcService<JobControlService>();
        endpoints.MapGrpcHealthAndReflection();
        return endpoints;
    }
}
