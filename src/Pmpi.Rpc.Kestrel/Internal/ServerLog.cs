using System.Net;
using Microsoft.Extensions.Logging;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>
/// Every event Pmpi.Rpc's servers log (category <see cref="RefusalLog.Category"/>), with its id; the refusals among
/// them go through the <see cref="RefusalLog"/>, the first per address and kind in an interval:
/// <code>
/// id  name                level    when
/// 1   RefusalsSummarized  Warning  an interval ended in which one address was refused more than once for one reason; the first was logged in full
/// 2   ConnectionRefused   Warning  a connection was refused: its address (or the listener) holds as many authenticated connections as it may
/// 3   ConnectionShed      Warning  an unauthenticated connection was closed to make room for another at a full cap
/// 4   TlsRefused          Warning  a TLS handshake failed: a client certificate of another CA, no TLS at all, or a handshake broken off or too slow
/// </code>
/// </summary>
internal static partial class ServerLog
{
    [LoggerMessage(EventId = 1, EventName = "RefusalsSummarized", Level = LogLevel.Warning,
        Message = "Refused {Count} more {Kind} from {Peer} in the last {Seconds} s")]
    public static partial void RefusalsSummarized(ILogger logger, int count, string kind, IPAddress peer, double seconds);

    [LoggerMessage(EventId = 2, EventName = "ConnectionRefused", Level = LogLevel.Warning, Message = "Refused a connection from {Peer}: {Reason}")]
    public static partial void ConnectionRefused(ILogger logger, string peer, string reason);

    [LoggerMessage(EventId = 3, EventName = "ConnectionShed", Level = LogLevel.Warning,
        Message = "Closed the unauthenticated connection from {Peer} to admit one from {Newcomer}: {Full} held as many connections as it may")]
    public static partial void ConnectionShed(ILogger logger, string peer, string newcomer, string full);

    [LoggerMessage(EventId = 4, EventName = "TlsRefused", Level = LogLevel.Warning, Message = "Refused a TLS handshake from {Peer}: {Reason}")]
    public static partial void TlsRefused(ILogger logger, string peer, string reason);
}
