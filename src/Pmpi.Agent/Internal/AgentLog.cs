using Microsoft.Extensions.Logging;

namespace Pmpi.Agent.Internal;

/// <summary>
/// Every event Pmpi.Agent logs, with its id (one table for the assembly, so ids never collide):
/// <code>
/// id  name           level        when
/// 1   Listening      Information  the agent's endpoint is bound and serving
/// 2   JobLaunched    Information  a Launch call started all of its ranks
/// 3   LaunchFailed   Warning      a rank program could not be started
/// 4   RankExited     Information  a launched rank ended (any exit code)
/// 5   JobKilled      Information  a job's ranks were killed (Kill call or shutdown)
/// 6   ShuttingDown   Information  the agent was asked to stop (SIGTERM, Ctrl+C, service manager)
/// 7   CallRefused    Warning      a call lacked valid credentials (no cluster membership, a bad ticket or job key); nothing started;
///                                 the first per address, method and status in 10 s (Pmpi.Rpc.Kestrel's RefusalsSummarized counts the rest)
/// 8   Insecure       Warning      the agent accepts every caller in cleartext (--insecure)
/// 9   RankUnresponsive Warning    a rank's runtime stopped sending heartbeats (stopped or frozen)
/// 10  MasterGone     Warning      a job's Launch call ended before its ranks did (the master ended it, went away or stopped answering pings)
/// 11  UploadRefused  Warning      a staged file's bytes were not the ones its upload named (wrong hash or length), or did not fit under the staging limit; nothing kept
/// 12  StagedCleaningFailed Warning the store of staged programs could not be cleaned; tried again at the next staged launch
/// </code>
/// </summary>
internal static partial class AgentLog
{
    [LoggerMessage(EventId = 1, EventName = "Listening", Level = LogLevel.Information,
        Message = "pmpi agent listening on {Address} (slots {Slots}, domain {Domain}, ranks bind {RankBindAddress})")]
    public static partial void Listening(ILogger logger, Uri address, int slots, string domain, string rankBindAddress);

    [LoggerMessage(EventId = 2, EventName = "JobLaunched", Level = LogLevel.Information,
        Message = "Job {JobId}: launched {RankCount} ranks for master {Master}")]
    public static partial void JobLaunched(ILogger logger, string jobId, int rankCount, string master);

    [LoggerMessage(EventId = 3, EventName = "LaunchFailed", Level = LogLevel.Warning, Message = "Job {JobId}: launch failed: {Reason}")]
    public static partial void LaunchFailed(ILogger logger, string jobId, string reason);

    [LoggerMessage(EventId = 4, EventName = "RankExited", Level = LogLevel.Information,
        Message = "Job {JobId}: rank {Rank} (pid {ProcessId}) exited with code {ExitCode}")]
    public static partial void RankExited(ILogger logger, string jobId, int rank, int processId, int exitCode);

    [LoggerMessage(EventId = 5, EventName = "JobKilled", Level = LogLevel.Information, Message = "Job {JobId}: killed its {RankCount} ranks")]
    public static partial void JobKilled(ILogger logger, string jobId, int rankCount);

    [LoggerMessage(EventId = 6, EventName = "ShuttingDown", Level = LogLevel.Information,
        Message = "pmpi agent shutting down: killing the ranks of {JobCount} running jobs")]
    public static partial void ShuttingDown(ILogger logger, int jobCount);

    [LoggerMessage(EventId = 7, EventName = "CallRefused", Level = LogLevel.Warning, Message = "Refused {Method} from {Peer}: {Reason}")]
    public static partial void CallRefused(ILogger logger, string method, string peer, string reason);

    [LoggerMessage(EventId = 8, EventName = "Insecure", Level = LogLevel.Warning,
        Message = "pmpi agent runs with --insecure: cleartext, and every caller who reaches {Address} may run programs as this user")]
    public static partial void Insecure(ILogger logger, Uri address);

    [LoggerMessage(EventId = 9, EventName = "RankUnresponsive", Level = LogLevel.Warning,
        Message = "Job {JobId}: rank {Rank} (pid {ProcessId}) sent no heartbeat for {Seconds:F1} s: stopped or frozen")]
    public static partial void RankUnresponsive(ILogger logger, string jobId, int rank, int processId, double seconds);

    [LoggerMessage(EventId = 10, EventName = "MasterGone", Level = LogLevel.Warning,
        Message = "Job {JobId}: master {Master} ended the launch or stopped answering; killing its {RankCount} ranks here")]
    public static partial void MasterGone(ILogger logger, string jobId, string master, int rankCount);

    [LoggerMessage(EventId = 11, EventName = "UploadRefused", Level = LogLevel.Warning, Message = "Refused an upload of a staged file: {Reason}")]
    public static partial void UploadRefused(ILogger logger, string reason);

    [LoggerMessage(EventId = 12, EventName = "StagedCleaningFailed", Level = LogLevel.Warning, Message = "Could not clean the staged programs in {Root}: {Reason}")]
    public static partial void StagedCleaningFailed(ILogger logger, string root, string reason);
}
