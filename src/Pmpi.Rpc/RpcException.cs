namespace Pmpi.Rpc;

/// <summary>gRPC status codes (grpc/doc/statuscodes.md), with the values that travel in grpc-status.</summary>
public enum StatusCode
{
    /// <summary>Success.</summary>
    OK = 0,
    /// <summary>The operation was cancelled, typically by the caller.</summary>
    Cancelled = 1,
    /// <summary>An error with no better code, e.g. a server handler's unexpected exception.</summary>
    Unknown = 2,
    /// <summary>The client sent something invalid, whatever the system's state.</summary>
    InvalidArgument = 3,
    /// <summary>The deadline passed before the operation completed.</summary>
    DeadlineExceeded = 4,
    /// <summary>A requested entity was not found.</summary>
    NotFound = 5,
    /// <summary>The entity a client tried to create already exists.</summary>
    AlreadyExists = 6,
    /// <summary>The caller lacks permission (e.g. a wrong job token).</summary>
    PermissionDenied = 7,
    /// <summary>A resource ran out, e.g. a message exceeded the size limit.</summary>
    ResourceExhausted = 8,
    /// <summary>The system is not in a state to run the operation.</summary>
    FailedPrecondition = 9,
    /// <summary>The operation was aborted, e.g. by a concurrency conflict or a job abort.</summary>
    Aborted = 10,
    /// <summary>The operation was attempted past a valid range.</summary>
    OutOfRange = 11,
    /// <summary>The method is not implemented (or not known) by the server.</summary>
    Unimplemented = 12,
    /// <summary>An internal invariant broke, e.g. a protocol violation.</summary>
    Internal = 13,
    /// <summary>The service is unavailable (e.g. connection refused or broken); retrying may help.</summary>
    Unavailable = 14,
    /// <summary>Unrecoverable data loss or corruption.</summary>
    DataLoss = 15,
    /// <summary>The request lacks valid authentication credentials.</summary>
    Unauthenticated = 16,
}

/// <summary>A call ended with a non-OK status: the code and detail the peer sent, or a local transport failure.</summary>
/// <param name="statusCode">The call's status code.</param>
/// <param name="detail">The status message (grpc-message), already percent-decoded.</param>
/// <param name="innerException">The local failure behind the status, if any.</param>
public sealed class RpcException(StatusCode statusCode, string detail, Exception? innerException = null)
    : Exception($"{statusCode}: {detail}", innerException)
{
    /// <summary>The call's status code.</summary>
    public StatusCode StatusCode { get; } = statusCode;

    /// <summary>The status message.</summary>
    public string Detail { get; } = detail;
}
