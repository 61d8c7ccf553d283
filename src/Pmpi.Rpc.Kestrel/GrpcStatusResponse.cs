using System.Globalization;
using Grpc.Core;
using Microsoft.AspNetCore.Http;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// Ends a gRPC call that no gRPC for .NET handler serves (a refused caller, a relay that could not reach its hop)
/// with a status: in the headers of a trailers-only response when nothing was sent yet, else in the trailers.
/// </summary>
public static class GrpcStatusResponse
{
    /// <summary>Writes <paramref name="code"/> and <paramref name="detail"/> as the call's grpc-status and grpc-message.</summary>
    public static void Write(HttpResponse response, StatusCode code, string detail)
    {
        ArgumentNullException.ThrowIfNull(response);
        ArgumentNullException.ThrowIfNull(detail);
        var status = ((int)code).ToString(CultureInfo.InvariantCulture);
        if (!response.HasStarted)
        {
            response.ContentType = "application/grpc";
            response.Headers["grpc-status"] = status;
            if (detail.Length > 0) response.Headers["grpc-message"] = GrpcMessage.Encode(detail);
            return;
        }
        response.AppendTrailer("grpc-status", status);
        if (detail.Length > 0) response.AppendTrailer("grpc-message", GrpcMessage.Encode(detail));
    }
}
