using Grpc.AspNetCore.Server;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Pmpi.Rpc.Kestrel.Internal;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// A daemon's check of who may call a gRPC service's methods, made before gRPC for .NET reads a request byte, so an
/// unauthenticated caller never makes the server buffer a message; an interceptor would run only after the request
/// was read. A call that passes authenticates its connection, which the listener then never sheds for another
/// (<see cref="RpcServerLimits.AuthenticationTimeout"/>).
/// </summary>
public static class CallerChecks
{
    /// <summary>
    /// Checks the caller of each method of the service mapped by <paramref name="builder"/> (MapGrpcService) with
    /// <paramref name="authenticate"/>, which is given the call and its method's path ("/pmpi.v1.Agent/Launch") and
    /// throws an <see cref="RpcException"/> (UNAUTHENTICATED, PERMISSION_DENIED) that becomes the call's status.
    /// </summary>
    public static TBuilder RequireCaller<TBuilder>(this TBuilder builder, Action<HttpContext, string> authenticate) where TBuilder : IEndpointConventionBuilder
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(authenticate);
        builder.Add(endpoint =>
        {
            // The service's unimplemented-method endpoint carries no method: it answers without reading either.
            if (endpoint.Metadata.OfType<GrpcMethodMetadata>().FirstOrDefault() is not { } grpc || endpoint.RequestDelegate is not { } serve) return;
            string path = grpc.Method.FullName;
            endpoint.RequestDelegate = context =>
            {
                try
                {
                    authenticate(context, path);
                }
                catch (RpcException e)
                {
                    GrpcStatusResponse.Write(context.Response, e.StatusCode, e.Status.Detail);
                    return Task.CompletedTask;
                }
                AdmittedConnection.MarkAuthenticated(context);
                return serve(context);
            };
        });
        return builder;
    }

    /// <summary>The caller's "address:port", for logs and refusals.</summary>
    public static string Peer(this HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return $"{context.Connection.RemoteIpAddress}:{context.Connection.RemotePort}";
    }
}
