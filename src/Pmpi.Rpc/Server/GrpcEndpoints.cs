using System.Globalization;
using Google.Protobuf;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Server;

/// <summary>
/// Maps gRPC methods onto Kestrel endpoints: each method is a POST to /package.Service/Method whose request and
/// response bodies carry length-prefixed messages and whose status travels in grpc-status/grpc-message trailers
/// (or in the headers of a trailers-only response when nothing was sent).
/// </summary>
public static class GrpcEndpoints
{
    /// <summary>Maps a unary method.</summary>
    public static IEndpointConventionBuilder MapGrpcUnary<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<TRequest, ServerCallContext, Task<TResponse>> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse> =>
        endpoints.MapPost(path, context => Serve<TRequest, TResponse>(context, options ?? RpcOptions.Default, async (requests, responses, call) =>
        {
            var request = await requests.ReadAsync(call.CancellationToken).ConfigureAwait(false)
                ?? throw new RpcException(StatusCode.Internal, "The request stream ended without a message.");
            await responses.WriteAsync(await handler(request, call).ConfigureAwait(false), call.CancellationToken).ConfigureAwait(false);
        }));

    /// <summary>Maps a server-streaming method.</summary>
    public static IEndpointConventionBuilder MapGrpcServerStreaming<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<TRequest, MessageWriter<TResponse>, ServerCallContext, Task> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse> =>
        endpoints.MapPost(path, context => Serve<TRequest, TResponse>(context, options ?? RpcOptions.Default, async (requests, responses, call) =>
        {
            var request = await requests.ReadAsync(call.CancellationToken).ConfigureAwait(false)
                ?? throw new RpcException(StatusCode.Internal, "The request stream ended without a message.");
            await handler(request, responses, call).ConfigureAwait(false);
        }));

    /// <summary>Maps a bidirectional-streaming method.</summary>
    public static IEndpointConventionBuilder MapGrpcDuplexStreaming<TRequest, TResponse>(this IEndpointRouteBuilder endpoints, string path,
        Func<MessageReader<TRequest>, MessageWriter<TResponse>, ServerCallContext, Task> handler, RpcOptions? options = null)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse> =>
        endpoints.MapPost(path, context => Serve(context, options ?? RpcOptions.Default, handler));

    /// <summary>Answers every other gRPC request with UNIMPLEMENTED, and non-gRPC requests with 404.</summary>
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

    private static async Task Serve<TRequest, TResponse>(HttpContext context, RpcOptions options,
        Func<MessageReader<TRequest>, MessageWriter<TResponse>, ServerCallContext, Task> handler)
        where TRequest : IMessage<TRequest>, new() where TResponse : IMessage<TResponse>
    {
        if (!IsGrpc(context.Request))
        {
            context.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
            return;
        }
        // Calls may stream for the whole job: Kestrel's body size and minimum data rate limits would cut them.
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } bodySize) bodySize.MaxRequestBodySize = null;
        if (context.Features.Get<IHttpMinRequestBodyDataRateFeature>() is { } dataRate) dataRate.MinDataRate = null;

        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted);
        if (GrpcTimeout.TryParse(context.Request.Headers["grpc-timeout"], out var timeout)) deadline.CancelAfter(timeout);

        context.Response.ContentType = "application/grpc";
        var call = new ServerCallContext(context, deadline.Token);
        StatusCode code = StatusCode.OK;
        string detail = "";
        try
        {
            await handler(new MessageReader<TRequest>(context.Request.BodyReader, options), new MessageWriter<TResponse>(context.Response.BodyWriter), call).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            (code, detail) = (e.StatusCode, e.Detail);
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested)
        {
            (code, detail) = context.RequestAborted.IsCancellationRequested
                ? (StatusCode.Cancelled, "The client cancelled the call.")
                : (StatusCode.DeadlineExceeded, $"The deadline of {timeout} passed.");
        }
        catch (Exception e)
        {
            // A handler's bug ends its call, never the server.
            (code, detail) = (StatusCode.Unknown, $"{e.GetType().Name}: {e.Message}");
        }
        if (context.RequestAborted.IsCancellationRequested) return;
        WriteStatus(context.Response, code, detail);
    }

    private static bool IsGrpc(HttpRequest request) =>
        request.ContentType is { } type && type.StartsWith("application/grpc", StringComparison.OrdinalIgnoreCase);

    private static void WriteStatus(HttpResponse response, StatusCode code, string detail)
    {
        var status = ((int)code).ToString(CultureInfo.InvariantCulture);
        var message = Uri.EscapeDataString(detail);
        if (!response.HasStarted)
        {
            // Trailers-only response: the status rides in the headers.
            response.ContentType = "application/grpc";
            response.Headers["grpc-status"] = status;
            if (detail.Length > 0) response.Headers["grpc-message"] = message;
            return;
        }
        response.AppendTrailer("grpc-status", status);
        if (detail.Length > 0) response.AppendTrailer("grpc-message", message);
    }

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
}
