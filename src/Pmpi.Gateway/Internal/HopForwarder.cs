using System.Net;
using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Kestrel.Internal;
using Yarp.ReverseProxy.Forwarder;

namespace Pmpi.Gateway.Internal;

/// <summary>Where a relayed call goes next: a description for errors, the address, and the client that dials it.</summary>
internal readonly record struct Hop(string Name, string Address, HttpMessageInvoker Client);

/// <summary>
/// What both relays (rank streams and control calls) do once they chose a call's next hop or refused it: forward it
/// with YARP's <see cref="IHttpForwarder"/> and answer a failed hop with a status naming it, or answer a refusal with
/// a gRPC status and log it.
/// </summary>
internal sealed class HopForwarder(IHttpForwarder forwarder, GatewayCounters counters, GatewayOptions options, RefusalLog refusals, ILogger<HopForwarder> logger)
{
    private readonly ForwarderRequestConfig _config = new()
    {
        // Set on every relayed call: a rank stream may idle for a whole compute phase, and pings do not reset it.
        ActivityTimeout = options.StreamIdleTimeout,
        Version = HttpVersion.Version20,
        VersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    /// <summary>
    /// Whether the request is a gRPC call at all (application/grpc or a subtype such as application/grpc+proto,
    /// PROTOCOL-HTTP2.md); if not, it is answered 415, as a gRPC server answers a content-type it does not serve.
    /// </summary>
    public static bool IsGrpc(HttpContext context)
    {
        const string Grpc = "application/grpc";
        if (context.Request.ContentType is { } type && type.StartsWith(Grpc, StringComparison.OrdinalIgnoreCase)
            && (type.Length == Grpc.Length || type[Grpc.Length] is '+' or ';'))
            return true;
        context.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
        return false;
    }

    /// <summary>Forwards the call to <paramref name="hop"/>; <paramref name="route"/> names it in errors and the log.</summary>
    public async Task ForwardAsync(HttpContext context, Hop hop, string route)
    {
        var error = await forwarder.SendAsync(context, hop.Address, hop.Client, _config, HttpTransformer.Default).ConfigureAwait(false);
        if (error == ForwarderError.None) return;
        var cause = context.Features.Get<IForwarderErrorFeature>()?.Exception is { } exception ? $"{error}: {exception.Message}" : error.ToString();
        var failure = $"gateway of domain '{options.Domain}' could not relay {route} to {hop.Name} {hop.Address}: {cause}";
        GatewayLog.HopFailed(logger, route, failure);
        // Before the response started YARP only set a 502: answer the caller with a status naming the hop instead.
        if (!context.Response.HasStarted && !context.RequestAborted.IsCancellationRequested)
        {
            context.Response.StatusCode = StatusCodes.Status200OK;
            GrpcStatusResponse.Write(context.Response, StatusCode.Unavailable, failure);
        }
    }

    /// <summary>Refuses the call before anything was forwarded: counted, logged with the caller's address (or counted in the log), answered with the status.</summary>
    public void Refuse(HttpContext context, string method, StatusCode code, string detail)
    {
        counters.Refused();
        // A relayed call's method is its caller's path: counted by status alone, or each new path would be a line.
        GatewayLog.Refused(logger, refusals, context, method, $"relayed calls ({code})", LogText.Printable(detail));
        GrpcStatusResponse.Write(context.Response, code, $"Gateway of domain '{options.Domain}' refused the call: {detail}.");
    }
}
