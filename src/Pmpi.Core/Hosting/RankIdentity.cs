using System.Globalization;

namespace Pmpi.Hosting;

/// <summary>
/// Who a rank process is, as its agent tells it through environment variables. Their names are the contract
/// between an agent and the ranks it launches, so they live here, once.
/// </summary>
internal sealed record RankIdentity(string JobId, int Rank, int Size, Uri Master, string JobToken, string? Domain, string BindAddress)
{
    public const string JobIdVariable = "PMPI_JOB_ID";
    public const string RankVariable = "PMPI_RANK";
    public const string SizeVariable = "PMPI_SIZE";
    public const string MasterVariable = "PMPI_MASTER";
    public const string JobTokenVariable = "PMPI_JOB_TOKEN";
    public const string DomainVariable = "PMPI_DOMAIN";
    /// <summary>The address the rank's endpoint listens on and advertises; defaults to loopback.</summary>
    public const string BindAddressVariable = "PMPI_BIND_ADDRESS";

    /// <summary>The identity in the environment, or null when this process was not launched by an agent.</summary>
    /// <exception cref="MpiException">A variable is present but malformed; the message names it.</exception>
    public static RankIdentity? FromEnvironment(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        var jobId = read(JobIdVariable);
        if (string.IsNullOrEmpty(jobId)) return null;
        int size = Integer(read, SizeVariable, minimum: 1);
        int rank = Integer(read, RankVariable, minimum: 0);
        if (rank >= size) throw Malformed(RankVariable, rank.ToString(CultureInfo.InvariantCulture), $"a rank below {SizeVariable}={size}");
        var master = read(MasterVariable);
        if (!Uri.TryCreate(master, UriKind.Absolute, out var masterUri) || masterUri.Scheme is not ("http" or "https"))
            throw Malformed(MasterVariable, master, "an http:// or https:// address");
        var token = read(JobTokenVariable);
        if (string.IsNullOrEmpty(token)) throw Malformed(JobTokenVariable, token, "the job's token");
        return new RankIdentity(jobId, rank, size, masterUri, token, read(DomainVariable), read(BindAddressVariable) ?? "127.0.0.1");
    }

    private static int Integer(Func<string, string?> read, string name, int minimum)
    {
        var text = read(name);
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value < minimum)
            throw Malformed(name, text, $"an integer of at least {minimum}");
        return value;
    }

    private static MpiException Malformed(string name, string? value, string expected) =>
        new(ErrorClass.InvalidArgument, $"Environment variable {name}='{value}' is not {expected}; it is set by the PMPI agent that launched this rank.");
}
