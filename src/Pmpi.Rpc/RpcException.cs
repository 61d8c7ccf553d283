namespace Pmpi.Rpc;

/// <summary>gRPC status codes (grpc/doc/statuscodes.md).</summary>
public enum StatusCode
{
    /// <summary>Success.</summary>
    OK = 0,
    /// <summary>The operation was cancelled, typically by the caller.</summary>
    Cancelled = 1,
    /// <summary>An error with no better code.</summary>
    Unknown = 2,
    /// <summary>The client sent something invalid.</summary>
    InvalidArgument = 3,
    /// <summary>The deadline passed before the operation completed.</summary>
    DeadlineExceeded = 4,
    /// <summary>A requested entity was not found.</summary>
    NotFound = 5,
    /// <summary>The caller lacks permission (e.g. a wrong job token).</summary>
    PermissionDenied = 7,
    /// <summary>A resource ran out, e.g. a message exceeded the size limit.</summary>
    ResourceExhausted = 8,
    /// <summary>The system is not in a state to run the operation.</summary>
    FailedPrecondition = 9,
    /// <summary>The operation was aborted.</summary>
    Aborted = 10,
    /// <summary>The method is not implemented.</summary>
    Unimplemented = 12,
    /// <summary>An internal invariant broke.</summary>
    Internal = 13,
    /// <summary>The service is unavailable (e.g. connection refused).</summary>
    Unavailable = 14,
}

/// <summary>A call ended with a non-OK status: the code and detail the peer sent, or a local transport failure.</summary>
public sealed class RpcException(StatusCode statusCode, string detail, Exception? innerException = null)
    : Exception($"{statusCode}: {detail}", innerException)
{
    /// <summary>The call's status code.</summary>
    public StatusCode StatusCode { get; } = statusCode;

    /// <summary>The status message.</summary>
    public string Detail { get; } = detail;
}
