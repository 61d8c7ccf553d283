using System.Globalization;
using Pmpi.Rpc;

namespace Pmpi.Hosting;

/// <summary>
/// Who a rank process is, as its agent tells it through the <see cref="RankEnvironment"/> variables.
/// </summary>
internal sealed record RankIdentity(string JobId, int Rank, int Size, Uri Master, string JobToken, string? Domain, string BindAddress)
{
    /// <summary>The process id of the launching agent, when it gave one; the rank ends itself once that process is gone.</summary>
    public int? AgentProcessId { get; init; }

    /// <summary>The inherited pipe the runtime writes heartbeats to, when the agent gave one (see <see cref="RankHeartbeat"/>).</summary>
    public string? HeartbeatHandle { get; init; }

    /// <summary>The identity in the environment, or null when this process was not launched by an agent.</summary>
    /// <exception cref="MpiException">A variable is present but malformed; the message names it.</exception>
    public static RankIdentity? FromEnvironment(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        var jobId = read(RankEnvironment.JobId);
        if (string.IsNullOrEmpty(jobId)) return null;
        int size = Integer(read, RankEnvironment.Size, minimum: 1);
        int rank = Integer(read, RankEnvironment.Rank, minimum: 0);
        if (rank >= size) throw Malformed(RankEnvironment.Rank, rank.ToString(CultureInfo.InvariantCulture), $"a rank below {RankEnvironment.Size}={size}");
        var master = read(RankEnvironment.Master);
        if (!Uri.TryCreate(master, UriKind.Absolute, out var masterUri) || masterUri.Scheme is not ("http" or "https"))
            throw Malformed(RankEnvironment.Master, master, "an http:// or https:// address");
        var token = read(RankEnvironment.JobToken);
        if (string.IsNullOrEmpty(token)) throw Malformed(RankEnvironment.JobToken, token, "the job's token");
        return new RankIdentity(jobId, rank, size, masterUri, token, read(RankEnvironment.Domain), read(RankEnvironment.BindAddress) ?? "127.0.0.1")
        {
            AgentProcessId = read(RankEnvironment.AgentProcessId) is null ? null : Integer(read, RankEnvironment.AgentProcessId, minimum: 1),
            HeartbeatHandle = HandleOrNull(read, RankEnvironment.Heartbeat),
        };
    }

    private static int Integer(Func<string, string?> read, string name, int minimum)
    {
        var text = read(name);
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value < minimum)
            throw Malformed(name, text, $"an integer of at least {minimum}");
        return value;
    }

    private static string? HandleOrNull(Func<string, string?> read, string name)
    {
        var text = read(name);
        if (text is null) return null;
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out _)) throw Malformed(name, text, "a pipe handle (a non-negative integer)");
        return text;
    }

    private static MpiException Malformed(string name, string? value, string expected) =>
        new(ErrorClass.InvalidArgument, $"Environment variable {name}='{value}' is not {expected}; it is set by the PMPI agent that launched this rank.");
}
