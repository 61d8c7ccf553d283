using System.Net;
using Microsoft.Extensions.Logging;

namespace Pmpi.Rpc.Server.Internal;

/// <summary>
/// Every event Pmpi.Rpc's servers log (category <see cref="RefusalLog.Category"/>), with its id:
/// <code>
/// id  name                level    when
/// 1   RefusalsSummarized  Warning  an interval ended in which one address was refused more than once for one reason; the first was logged in full
/// </code>
/// </summary>
internal static partial class ServerLog
{
    [LoggerMessage(EventId = 1, EventName = "RefusalsSummarized", Level = LogLevel.Warning,
        Message = "Refused {Count} more {Kind} from {Peer} in the last {Seconds} s")]
    public static partial void RefusalsSummarized(ILogger logger, int count, string kind, IPAddress peer, double seconds);
}
