using System.Diagnostics.CodeAnalysis;
using Grpc.Health.V1;
using Grpc.AspNetCore.Server;
using Grpc.AspNetCore.Server.Model;
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
/// gRPC for .NET as PMPI's daemons serve it: each service's methods bound from a table (<see cref="GrpcMethodTable{TService}"/>),
/// and what standard gRPC tooling asks of every server (grpc_health_probe, Kubernetes' gRPC probes, grpcurl): the
/// grpc.health.v1 Health service and server reflection, beside the daemon's own methods. Neither needs the cluster
/// credential: health says only "serving", and reflection only what proto/ publishes.
/// </summary>
public static class DaemonGrpcExtensions
{
    /// <summary>What gRPC for .NET's activation of a service type reflects on (its constructors and methods), which trimming must keep.</summary>
    internal const DynamicallyAccessedMemberTypes ServiceMembers =
        DynamicallyAccessedMemberTypes.PublicConstructors | DynamicallyAccessedMemberTypes.PublicMethods | DynamicallyAccessedMemberTypes.NonPublicMethods;

    /// <summary>
    /// Adds gRPC for .NET as a PMPI daemon serves it: each service bound from its <see cref="GrpcMethodTable{TService}"/>
    /// (<see cref="AddMethodTable"/>) and no longer by gRPC for .NET's binder of generated code, which is removed; Health,
    /// answering SERVING for the server ("") and each of <paramref name="served"/>; and reflection listing
    /// <paramref name="served"/>, Health and itself. Health and reflection are added with TryAdd, so a host may register
    /// its own first. Returns gRPC for .NET's builder, for the daemon's tables and per-service options.
    /// </summary>
    public static IGrpcServerBuilder AddDaemonGrpc(this IServiceCollection services, params ProtoService[] served)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(served);
        // A handler's failure other than an RpcException reaches its (authenticated) caller with its message, as
        // "Exception was thrown by handler. Type: message", not only the first sentence.
        var grpc = services.AddGrpc(options => options.EnableDetailedErrors = true);
        // The binder registered for every service type; a service without a table would have no methods.
        services.RemoveAll(typeof(IServiceMethodProvider<>));
        services.TryAddSingleton(_ =>
        {
            var health = new HealthServiceImpl();
            health.SetStatus("", HealthCheckResponse.Types.ServingStatus.Serving);
            foreach (var service in served) health.SetStatus(service.FullName, HealthCheckResponse.Types.ServingStatus.Serving);
            return health;
        });
        services.TryAddSingleton(_ => new ReflectionServiceImpl([.. served, Health.Descriptor, ServerReflection.Descriptor]));
        return grpc
            .AddMethodTable<HealthServiceImpl>(Health.Descriptor, table => table
                .Unary<HealthCheckRequest, HealthCheckResponse>("Check", (health, request, context) => health.Check(request, context))
                .ServerStreaming<HealthCheckRequest, HealthCheckResponse>("Watch", (health, request, responses, context) => health.Watch(request, responses, context)))
            .AddMethodTable<ReflectionServiceImpl>(ServerReflection.Descriptor, table => table
                .DuplexStreaming<ServerReflectionRequest, ServerReflectionResponse>("ServerReflectionInfo",
                    (reflection, requests, responses, context) => reflection.ServerReflectionInfo(requests, responses, context)));
    }

    /// <summary>Serves <typeparamref name="TService"/>'s methods of <paramref name="service"/> (its contract's descriptor) as <paramref name="fill"/> lists them.</summary>
    public static IGrpcServerBuilder AddMethodTable<[DynamicallyAccessedMembers(ServiceMembers)] TService>(this IGrpcServerBuilder grpc, ProtoService service, Action<GrpcMethodTable<TService>> fill)
        where TService : class
    {
        ArgumentNullException.ThrowIfNull(grpc);
        ArgumentNullException.ThrowIfNull(fill);
        var table = new GrpcMethodTable<TService>(service);
        fill(table);
        grpc.Services.AddSingleton<IServiceMethodProvider<TService>>(table);
        return grpc;
    }

    /// <summary>Maps Health and reflection, which <see cref="AddDaemonGrpc"/> added.</summary>
    public static IEndpointRouteBuilder MapGrpcHealthAndReflection(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        endpoints.MapGrpcService<HealthServiceImpl>();
        endpoints.MapGrpcService<ReflectionServiceImpl>();
        return endpoints;
    }
}
