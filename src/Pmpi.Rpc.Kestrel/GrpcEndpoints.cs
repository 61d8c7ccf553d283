using Google.Protobuf;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel.Internal;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// Maps gRPC methods onto Kestrel endpoints: each method is a POST to /package.Service/Method whose request and
/// response bodies carry length-prefixed messages and whose status travels in grpc-status/grpc-message trailers
/// (or in the headers of a trailers-only response when nothing was sent). A handler's failure ends its call with a
/// status, never the server: an <see cref="RpcException"/> gives its own code, anything else UNKNOWN.
/// </summary>
public static class GrpcEndpoints
{
    /// <summary>Maps a unary method: one request, one response.</summary>
    /// <param name="endpoints">Where to map it.</param>
    /// <param name="path">The method's path, e.g. "/pmpi.v1.Agent/GetNodeInfo" (see <see cref="ServicePaths"/>).</param>
    /// <param name="handler">Answers a request; throws <see cref="RpcException"/> to fail with a status.</param>
    /// <param name="options">Message size limits; <see cref="RpcOptions.Default"/> when null.</param>
    public static IEndpointConventionBuilder MapGrpcUnary<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<TRequest, ServerCallContext, Task<TResponse>> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        return endpoints.MapPost(path, context => ServeAsync<TRequest, TResponse>(context, options ?? RpcOptions.Default, async (requests, responses, call) =>
        {
            var request = await ReadSingleAsync(requests, call).ConfigureAwait(false);
            var response = await handler(request, call).ConfigureAwait(false)
                ?? throw new RpcException(new Status(StatusCode.Internal, $"The handler of {path} returned no response."));
            await responses.WriteAsync(response, call.CancellationToken).ConfigureAwait(false);
        }));
    }

    /// <summary>Maps a server-streaming method: one request, any number of responses written by the handler.</summary>
    /// <param name="endpoints">Where to map it.</param>
    /// <param name="path">The method's path.</param>
    /// <param name="handler">Writes the responses; the call ends OK when it returns.</param>
    /// <param name="options">Message size limits; <see cref="RpcOptions.Default"/> when null.</param>
    public static IEndpointConventionBuilder MapGrpcServerStreaming<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<TRequest, MessageWriter<TResponse>, ServerCallContext, Task> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        return endpoints.MapPost(path, context => ServeAsync<TRequest, TResponse>(context, options ?? RpcOptions.Default, async (requests, responses, call) =>
        {
            var request = await ReadSingleAsync(requests, call).ConfigureAwait(false);
            await handler(request, responses, call).ConfigureAwait(false);
        }));
    }

    /// <summary>Maps a bidirectional-streaming method: the handler reads requests and writes responses as it likes.</summary>
    /// <param name="endpoints">Where to map it.</param>
    /// <param name="path">The method's path, e.g. <see cref="ServicePaths.Connect"/>.</param>
    /// <param name="handler">Serves the call; it ends OK when the handler returns.</param>
    /// <param name="options">Message size limits; <see cref="RpcOptions.Default"/> when null.</param>
    public static IEndpointConventionBuilder MapGrpcDuplexStreaming<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<MessageReader<TRequest>, MessageWriter<TResponse>, ServerCallContext, Task> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        return endpoints.MapPost(path, context => ServeAsync(context, options ?? RpcOptions.Default, handler));
    }

    /// <summary>
    /// Checks the caller of every call of the endpoint before its first request byte is read: an
    /// <see cref="RpcException"/> thrown by <paramref name="authenticate"/> ends the call with its status, so an
    /// unauthenticated caller never makes the server buffer a request. A call that passes authenticates its
    /// connection, which the listener then never sheds for another (<see cref="RpcServerLimits.AuthenticationTimeout"/>).
    /// </summary>
    /// <param name="builder">A method mapped by one of the Map methods of this class.</param>
    /// <param name="authenticate">Throws <see cref="RpcException"/> (UNAUTHENTICATED, PERMISSION_DENIED) to refuse the call.</param>
    public static TBuilder RequireCaller<TBuilder>(this TBuilder builder, Action<ServerCallContext> authenticate) where TBuilder : IEndpointConventionBuilder
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(authenticate);
        builder.WithMetadata(new CallerCheck(authenticate));
        return builder;
    }

    /// <summary>
    /// Answers every other gRPC request with UNIMPLEMENTED (an unknown method of a known service included), and
    /// non-gRPC requests with 404. <see cref="RpcServer"/> maps it last.
    /// </summary>
    public static IEndpointConventionBuilder MapGrpcUnimplemented(this IEndpointRouteBuilder endpoints) =>
        endpoints.MapFallback(async context =>
        {
            if (!IsGrpc(context.Request))
            {
                context.Response.StatusCode = StatusCodes.Status404NotFound;
                return;
            }
            await DrainAsync(context).ConfigureAwait(false);
            WriteStatus(context.Response, StatusCode.Unimplemented, $"Method {context.Request.Path} is not implemented.");
        });

    private static async Task<TRequest> ReadSingleAsync<TRequest>(MessageReader<TRequest> requests, ServerCallContext call)
        where TRequest : IMessage<TRequest>, new() =>
        await requests.ReadAsync(call.CancellationToken).ConfigureAwait(false)
            ?? throw new RpcException(new Status(StatusCode.Internal, "The request stream ended without a message."));

    private static async Task ServeAsync<TRequest, TResponse>(HttpContext context, RpcOptions options,
        Func<MessageReader<TRequest>, MessageWriter<TResponse>, ServerCallContext, Task> handler)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse>
    {
        if (!IsGrpc(context.Request))
        {
            // PROTOCOL-HTTP2.md: a server should answer a content-type it does not serve with 415.
            context.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
            return;
        }
        // Calls may stream for the whole job: Kestrel's body size and minimum data rate limits would cut them, even
        // where the server was not set up with KestrelGrpcExtensions.ConfigureForGrpc.
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } bodySize) bodySize.MaxRequestBodySize = null;
        if (context.Features.Get<IHttpMinRequestBodyDataRateFeature>() is { } dataRate) dataRate.MinDataRate = null;

        using var lifetime = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted);
        DateTimeOffset? deadline = null;
        if (GrpcTimeout.TryParse(context.Request.Headers["grpc-timeout"], out var timeout))
        {
            deadline = DateTimeOffset.UtcNow + timeout;
            lifetime.CancelAfter(timeout);
        }

        context.Response.ContentType = "application/grpc";
        var call = new ServerCallContext(context, deadline, lifetime.Token);
        StatusCode code = StatusCode.OK;
        string detail = "";
        try
        {
            if (context.GetEndpoint()?.Metadata.GetMetadata<CallerCheck>() is { } check)
            {
                check.Authenticate(call);
                AdmittedConnection.MarkAuthenticated(context);
            }
            await handler(new MessageReader<TRequest>(context.Request.BodyReader, options),
                new MessageWriter<TResponse>(context.Response.BodyWriter, options), call).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            (code, detail) = (e.StatusCode, e.Status.Detail);
        }
        catch (OperationCanceledException) when (lifetime.IsCancellationRequested)
        {
            (code, detail) = context.RequestAborted.IsCancellationRequested
                ? (StatusCode.Cancelled, "The client cancelled the call.")
                : (StatusCode.DeadlineExceeded, $"The deadline of {timeout} passed.");
        }
        catch (Exception e)
        {
            // A handler's bug ends its call, never the server.
            (code, detail) = (StatusCode.Unknown, $"Exception was thrown by handler: {e.GetType().Name}: {e.Message}");
        }
        // A reset stream takes no status: there is nobody to read it.
        if (context.RequestAborted.IsCancellationRequested) return;
        WriteStatus(context.Response, code, detail);
    }

    /// <summary>application/grpc, or a subtype such as application/grpc+proto (PROTOCOL-HTTP2.md Content-Type).</summary>
    internal static bool IsGrpc(HttpRequest request)
    {
        const string Grpc = "application/grpc";
        if (request.ContentType is not { } type || !type.StartsWith(Grpc, StringComparison.OrdinalIgnoreCase)) return false;
        return type.Length == Grpc.Length || type[Grpc.Length] is '+' or ';';
    }

    /// <summary>Ends a call with a status (<see cref="GrpcStatusResponse"/>).</summary>
    internal static void WriteStatus(HttpResponse response, StatusCode code, string detail) => GrpcStatusResponse.Write(response, code, detail);

    private static async Task DrainAsync(HttpContext context)
    {
        try
        {
            await context.Request.Body.CopyToAsync(Stream.Null, context.RequestAborted).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or OperationCanceledException)
        {
            // The client went away; nothing to answer.
        }
    }

    /// <summary>The caller check <see cref="RequireCaller"/> attaches to an endpoint.</summary>
    private sealed record CallerCheck(Action<ServerCallContext> Authenticate);
}
