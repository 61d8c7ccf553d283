using Grpc.Health.V1;
using Grpc.AspNetCore.Server;
using Grpc.HealthCheck;
using Grpc.Reflection;
using Grpc.Reflection.V1Alpha;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using ProtoService = Google.Protobuf.Reflection.ServiceDescriptor;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// What standard gRPC tooling asks of every server (grpc_health_probe, Kubernetes' gRPC probes, grpcurl): the
/// grpc.health.v1 Health service and server reflection, served by gRPC for .NET beside a daemon's own methods.
/// Neither needs the cluster credential: health says only "serving", and reflection only what proto/ publishes.
/// </summary>
public static class StandardGrpcServices
{
    /// <summary>
    /// Adds gRPC for .NET with Health, answering SERVING for the server ("") and each of <paramref name="served"/>, and
    /// reflection listing <paramref name="served"/>, Health and itself. Both are added with TryAdd, so a host may
    /// register its own first. Returns gRPC for .NET's builder, for the daemon's per-service options.
    /// </summary>
    public static IGrpcServerBuilder AddGrpcHealthAndReflection(this IServiceCollection services, params ProtoService[] served)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(served);
        // A handler's failure other than an RpcException reaches its (authenticated) caller with its message, as
        // "Exception was thrown by handler. Type: message", not only the first sentence.
        var grpc = services.AddGrpc(options => options.EnableDetailedErrors = true);
        services.TryAddSingleton(_ =>
        {
            var health = new HealthServiceImpl();
            health.SetStatus("", HealthCheckResponse.Types.ServingStatus.Serving);
            foreach (var service in served) health.SetStatus(service.FullName, HealthCheckResponse.Types.ServingStatus.Serving);
            return health;
        });
        services.TryAddSingleton(_ => new ReflectionServiceImpl([.. served, Health.Descriptor, ServerReflection.Descriptor]));
        return grpc;
    }

    /// <summary>Maps the services <see cref="AddGrpcHealthAndReflection"/> added.</summary>
    public static IEndpointRouteBuilder MapGrpcHealthAndReflection(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        endpoints.MapGrpcService<HealthServiceImpl>();
        endpoints.MapGrpcService<ReflectionServiceImpl>();
        return endpoints;
    }
}
