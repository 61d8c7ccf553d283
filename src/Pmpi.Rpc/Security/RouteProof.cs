using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Pmpi.Rpc.Security;

/// <summary>
/// What a rank stream dialed through a gateway states before its first byte (in its relay preamble,
/// <see cref="Streams.RelayPreamble"/>; a control call relayed to a master, in its request headers), so the gateway
/// can choose the next hop (the Hello inside the stream is checked by the destination rank alone): the job, the
/// source and destination ranks, and a proof that the caller holds the job's key, an HMAC-SHA256 under the key over
/// the other three. A gateway relays only a stream whose proof matches a job registered with it.
/// </summary>
public static class RouteProof
{
    /// <summary>The job's id.</summary>
    public const string JobHeader = "pmpi-job";

    /// <summary>The calling rank's world rank.</summary>
    public const string SourceHeader = "pmpi-source-rank";

    /// <summary>The world rank the stream is for.</summary>
    public const string DestinationHeader = "pmpi-destination-rank";

    /// <summary>Base64 of HMAC-SHA256(job key, "pmpi/v1 route", job, source, destination).</summary>
    public const string ProofHeader = "pmpi-route-proof";

    /// <summary>The proof for a stream of <paramref name="jobId"/> from <paramref name="source"/> to <paramref name="destination"/>.</summary>
    /// <param name="jobToken">The job key as ranks hold it (base64).</param>
    /// <param name="jobId">The job.</param>
    /// <param name="source">The calling world rank.</param>
    /// <param name="destination">The world rank the stream is for.</param>
    public static string Compute(string jobToken, string jobId, int source, int destination) =>
        Compute(jobToken, jobId, source, destination.ToString(CultureInfo.InvariantCulture));

    /// <summary>The proof for a call from <paramref name="source"/> to a destination named by text: a rank's number, or "master" (<see cref="ControlRoute"/>).</summary>
    internal static string Compute(string jobToken, string jobId, int source, string destination)
    {
        ArgumentNullException.ThrowIfNull(jobToken);
        ArgumentNullException.ThrowIfNull(jobId);
        var text = string.Create(CultureInfo.InvariantCulture, $"pmpi/v1 route\n{jobId}\n{source}\n{destination}");
        return Convert.ToBase64String(HMACSHA256.HashData(Encoding.UTF8.GetBytes(jobToken), Encoding.UTF8.GetBytes(text)));
    }

    /// <summary>The four headers for such a stream.</summary>
    public static IEnumerable<KeyValuePair<string, string>> Headers(string jobToken, string jobId, int source, int destination) =>
    [
        new(JobHeader, jobId),
        new(SourceHeader, source.ToString(CultureInfo.InvariantCulture)),
        new(DestinationHeader, destination.ToString(CultureInfo.InvariantCulture)),
        new(ProofHeader, Compute(jobToken, jobId, source, destination)),
    ];

    /// <summary>
    /// Reads the route a request states, without checking its proof. <paramref name="header"/> gives a request
    /// header's value by name, empty when absent; <paramref name="failure"/> says which header is missing or malformed.
    /// </summary>
    public static bool TryRead(Func<string, string> header, out string jobId, out int source, out int destination, out string proof, out string failure)
    {
        ArgumentNullException.ThrowIfNull(header);
        jobId = header(JobHeader);
        proof = header(ProofHeader);
        source = destination = -1;
        failure = jobId.Length == 0 ? $"no {JobHeader} header"
            : !TryRank(header(SourceHeader), out source) ? $"no valid {SourceHeader} header (a world rank)"
            : !TryRank(header(DestinationHeader), out destination) ? $"no valid {DestinationHeader} header (a world rank)"
            : proof.Length == 0 ? $"no {ProofHeader} header"
            : "";
        return failure.Length == 0;
    }

    /// <summary>Whether <paramref name="proof"/> is the one for this route under <paramref name="jobToken"/>, compared in constant time.</summary>
    public static bool Matches(string jobToken, string jobId, int source, int destination, string proof) =>
        Matches(jobToken, jobId, source, destination.ToString(CultureInfo.InvariantCulture), proof);

    internal static bool Matches(string jobToken, string jobId, int source, string destination, string proof)
    {
        ArgumentNullException.ThrowIfNull(proof);
        return CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(Compute(jobToken, jobId, source, destination)), Encoding.UTF8.GetBytes(proof));
    }

    internal static bool TryRank(string text, out int rank) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out rank);
}
