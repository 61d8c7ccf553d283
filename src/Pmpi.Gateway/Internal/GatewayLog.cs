using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Kestrel.Internal;

namespace Pmpi.Gateway.Internal;

/// <summary>
/// Every event Pmpi.Gateway logs, with its id:
/// <code>
/// id  name            level        when
/// 1   Listening       Information  the gateway's endpoint is bound and serving
/// 2   Insecure        Warning      it accepts every caller in cleartext (--insecure)
/// 3   JobRegistered   Information  a master registered (or updated) a job
/// 4   JobRemoved      Information  a master removed a job
/// 5   CallRefused     Warning      a call or stream was refused: no credential, no registered job, a wrong proof or destination;
///                                  the first per address and reason in 10 s (Pmpi.Rpc.Kestrel's RefusalsSummarized counts the rest)
/// 6   HopFailed       Warning      a relayed stream could not reach its next hop, or broke there
/// 7   TunnelParked    Information  a gateway that dials out parked a call here to carry a connection to it
/// 8   TunnelDialFailed Warning     this gateway could not park a call at a peer it dials out to (--dial-out)
/// </code>
/// </summary>
internal static partial class GatewayLog
{
    [LoggerMessage(EventId = 1, EventName = "Listening", Level = LogLevel.Information, Message = "pmpi gateway for domain {Domain} listening on {Address}")]
    public static partial void Listening(ILogger logger, string domain, Uri address);

    [LoggerMessage(EventId = 2, EventName = "Insecure", Level = LogLevel.Warning,
        Message = "pmpi gateway runs with --insecure: cleartext, and every caller who reaches {Address} may register jobs")]
    public static partial void Insecure(ILogger logger, Uri address);

    [LoggerMessage(EventId = 3, EventName = "JobRegistered", Level = LogLevel.Information,
        Message = "Job {JobId}: registered by {Peer}, {RankCount} ranks, {LocalCount} in this domain")]
    public static partial void JobRegistered(ILogger logger, string jobId, string peer, int rankCount, int localCount);

    [LoggerMessage(EventId = 4, EventName = "JobRemoved", Level = LogLevel.Information, Message = "Job {JobId}: removed by {Peer}")]
    public static partial void JobRemoved(ILogger logger, string jobId, string peer);

    [LoggerMessage(EventId = 5, EventName = "CallRefused", Level = LogLevel.Warning, Message = "Refused {Method} from {Peer}: {Reason}")]
    public static partial void CallRefused(ILogger logger, string method, string peer, string reason);

    /// <summary>
    /// Logs a refused call (event 5), or only counts it when its caller's address was refused for the same
    /// <paramref name="kind"/> earlier in the interval (<see cref="RefusalLog"/>). The kind must not hold what a caller
    /// chose (a path, a job id): each new kind is logged in full.
    /// </summary>
    public static void Refused(ILogger logger, RefusalLog refusals, HttpContext context, string method, string kind, string reason)
    {
        if (refusals.ShouldLog(context.Connection.RemoteIpAddress, kind))
            CallRefused(logger, LogText.Printable(method), $"{context.Connection.RemoteIpAddress}:{context.Connection.RemotePort}", reason);
    }

    [LoggerMessage(EventId = 6, EventName = "HopFailed", Level = LogLevel.Warning, Message = "{Route}: {Error}")]
    public static partial void HopFailed(ILogger logger, string route, string error);

    [LoggerMessage(EventId = 7, EventName = "TunnelParked", Level = LogLevel.Information, Message = "The gateway of domain {Domain} dials out: {Peer} parked a call to carry a connection to it")]
    public static partial void TunnelParked(ILogger logger, string domain, string peer);

    [LoggerMessage(EventId = 8, EventName = "TunnelDialFailed", Level = LogLevel.Warning, Message = "Could not park a call at the peer gateway {Peer} (--dial-out): {Error}; retrying in {RetrySeconds} s")]
    public static partial void TunnelDialFailed(ILogger logger, Uri peer, string error, double retrySeconds);
}
