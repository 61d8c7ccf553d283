using Grpc.Core;

namespace Pmpi.Rpc.Internal;

/// <summary>How PMPI's messages quote a failed call.</summary>
internal static class StatusText
{
    /// <summary>
    /// "Code: detail", e.g. "Unavailable: The connection to 10.0.0.5:7000 was closed.": the text errors and logs have
    /// always quoted. An RpcException's Message is grpc's "Status(StatusCode=..., Detail=...)" with its debug
    /// exception appended.
    /// </summary>
    public static string Of(RpcException error) => $"{error.StatusCode}: {error.Status.Detail}";
}
