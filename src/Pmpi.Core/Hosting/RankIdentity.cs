using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using Google.Protobuf;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>
/// Who a rank process is, as its agent tells it through the <see cref="RankEnvironment"/> variables, and the job key
/// (<paramref name="JobToken"/>) it proves its membership with, read from the owner-only file the agent wrote.
/// <paramref name="Rank"/> is its job rank, which names it to the master and its peers; its world is the
/// <paramref name="Size"/> job ranks from <see cref="WorldFirst"/>.
/// </summary>
internal sealed record RankIdentity(string JobId, int Rank, int Size, string Master, string JobToken, string? Domain, string BindAddress)
{
    /// <summary>The job rank of its world's rank 0: non-zero for a rank of a world that ranks of the job spawned.</summary>
    public int WorldFirst { get; init; }

    /// <summary>Its rank in its world.</summary>
    public int WorldRank => Rank - WorldFirst;

    /// <summary>The process id of the launching agent, when it gave one; the rank ends itself once that process is gone.</summary>
    public int? AgentProcessId { get; init; }

    /// <summary>Whether the rank says on its standard error where it is bound (<c>pmpi run --report-bindings</c>).</summary>
    public bool ReportBindings { get; init; }

    /// <summary>Where the rank sits on its node, as its master placed it; null when the agent did not say (one older than this PMPI).</summary>
    public NodePlace? Place { get; init; }

    /// <summary>The gateway through which the rank reaches its master, when the master serves a domain the rank's does not reach directly.</summary>
    public Uri? MasterGateway { get; init; }

    /// <summary>How the rank reaches its master (and its gateway): trusting the cluster CA when the master speaks TLS; h2c otherwise.</summary>
    public RpcSecurity MasterSecurity { get; init; } = RpcSecurity.Insecure;

    /// <summary>Whether the rank's endpoint speaks TLS (a self-signed certificate its peers pin): when it listens beyond loopback.</summary>
    public bool EncryptStreams { get; init; }

    /// <summary>Whether every rank of the job runs on this node, linked by shared memory, so this one opens no endpoint.</summary>
    public bool NodeLocal { get; init; }

    /// <summary>The inherited pipe the runtime writes heartbeats to, when the agent gave one (see <see cref="RankHeartbeat"/>).</summary>
    public string? HeartbeatHandle { get; init; }

    /// <summary>How long the agent may leave the rank's heartbeats unread before the rank ends itself; null when it did not say.</summary>
    public TimeSpan? HeartbeatTimeout { get; init; }

    /// <summary>
    /// The job's table, when the agent gave it at launch (a node-local job): the rank then does not register with the
    /// master but tells its agent on the heartbeat pipe that it joined.
    /// </summary>
    public RankTable? Table { get; init; }

    /// <summary>
    /// Whether an agent launched this process as a rank: its job id is in the environment. Unlike
    /// <see cref="FromEnvironment"/>, it reads (and so deletes) no credentials file.
    /// </summary>
    public static bool IsLaunched(Func<string, string?> read) => !string.IsNullOrEmpty(read(RankEnvironment.JobId));

    /// <summary>
    /// The identity in the environment, or null when this process was not launched by an agent. Reads the rank's
    /// credentials file, which it then deletes: call it once per process.
    /// </summary>
    /// <exception cref="MpiException">A variable is present but malformed; the message names it.</exception>
    public static RankIdentity? FromEnvironment(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        var jobId = read(RankEnvironment.JobId);
        if (string.IsNullOrEmpty(jobId)) return null;
        int size = Integer(read, RankEnvironment.Size, minimum: 1);
        int first = read(RankEnvironment.WorldFirst) is null ? 0 : Integer(read, RankEnvironment.WorldFirst, minimum: 0);
        int rank = Integer(read, RankEnvironment.Rank, minimum: first);
        if (rank - first >= size)
            throw Malformed(RankEnvironment.Rank, rank.ToString(CultureInfo.InvariantCulture), $"a rank below {RankEnvironment.WorldFirst}+{RankEnvironment.Size}={first}+{size}");
        var master = read(RankEnvironment.Master);
        var scheme = SchemeOf(master) ?? throw Malformed(RankEnvironment.Master, master, MasterExpected);
        Uri? gatewayUri = null;
        if (read(RankEnvironment.MasterGateway) is { } gateway && (!Uri.TryCreate(gateway, UriKind.Absolute, out gatewayUri) || gatewayUri.Scheme != scheme))
            throw Malformed(RankEnvironment.MasterGateway, gateway, $"an {scheme}:// address, as the master's is");
        var credentials = ReadCredentials(read(RankEnvironment.CredentialsFile));
        if (scheme == Uri.UriSchemeHttps && credentials.Authority.IsEmpty)
            throw Malformed(RankEnvironment.CredentialsFile, read(RankEnvironment.CredentialsFile), "a credentials file naming the CA of the TLS master " + master);
        var heartbeat = HandleOrNull(read, RankEnvironment.Heartbeat);
        if (credentials.Table is not null && heartbeat is null)
            throw Malformed(RankEnvironment.Heartbeat, heartbeat, "a pipe handle: the credentials file holds the job's table, and the rank tells its agent on that pipe that it joined");
        var bind = read(RankEnvironment.BindAddress) ?? "127.0.0.1";
        if (!IPAddress.TryParse(bind, out var bindAddress)) throw Malformed(RankEnvironment.BindAddress, bind, "an IP address");
        return new RankIdentity(jobId, rank, size, master!, credentials.JobToken, read(RankEnvironment.Domain), bind)
        {
            WorldFirst = first,
            MasterGateway = gatewayUri,
            EncryptStreams = !IPAddress.IsLoopback(bindAddress),
            AgentProcessId = read(RankEnvironment.AgentProcessId) is null ? null : Integer(read, RankEnvironment.AgentProcessId, minimum: 1),
            MasterSecurity = credentials.Authority.IsEmpty ? RpcSecurity.Insecure
                : RpcSecurity.TrustingAuthority(X509CertificateLoader.LoadCertificate(credentials.Authority.Span)),
            HeartbeatHandle = heartbeat,
            HeartbeatTimeout = read(RankEnvironment.HeartbeatTimeout) is null ? null : TimeSpan.FromSeconds(Integer(read, RankEnvironment.HeartbeatTimeout, minimum: 1)),
            NodeLocal = read(RankEnvironment.NodeLocal) == "1",
            Table = credentials.Table,
            Place = PlaceOf(read),
            ReportBindings = read(RankEnvironment.ReportBindings) == "1",
        };
    }

    /// <summary>The rank's place on its node, when the agent gave all three variables; null when it gave none.</summary>
    private static NodePlace? PlaceOf(Func<string, string?> read)
    {
        if (read(RankEnvironment.LocalRank) is null && read(RankEnvironment.LocalSize) is null && read(RankEnvironment.NodeRank) is null) return null;
        int size = Integer(read, RankEnvironment.LocalSize, minimum: 1);
        int local = Integer(read, RankEnvironment.LocalRank, minimum: 0);
        if (local >= size) throw Malformed(RankEnvironment.LocalRank, local.ToString(CultureInfo.InvariantCulture), $"a rank below {RankEnvironment.LocalSize}={size}");
        return new NodePlace(local, size, Integer(read, RankEnvironment.NodeRank, minimum: 0));
    }

    /// <summary>
    /// The master's address, parsed where it is first dialed: <see cref="FromEnvironment"/> checks only its scheme, as
    /// a rank of a node-local job may never dial it and a first <see cref="Uri"/> costs a rank's start over 10 ms (the
    /// JIT of System.Private.Uri's vectorized search, which ReadyToRun images leave to run time).
    /// </summary>
    /// <exception cref="MpiException">InvalidArgument: it is not an address; the message names its variable.</exception>
    public Uri MasterUri => Uri.TryCreate(Master, UriKind.Absolute, out var uri) ? uri : throw Malformed(RankEnvironment.Master, Master, MasterExpected);

    private const string MasterExpected = "an http:// or https:// address";

    private static string? SchemeOf(string? address) =>
        address is null ? null
        : address.StartsWith("https://", StringComparison.OrdinalIgnoreCase) ? Uri.UriSchemeHttps
        : address.StartsWith("http://", StringComparison.OrdinalIgnoreCase) ? Uri.UriSchemeHttp
        : null;

    /// <summary>Reads the rank's credentials file and deletes it, so the key exists only in this process from now on.</summary>
    private static RankCredentials ReadCredentials(string? path)
    {
        if (string.IsNullOrEmpty(path)) throw Malformed(RankEnvironment.CredentialsFile, path, "the path of the rank's credentials file");
        RankCredentials credentials;
        try
        {
            credentials = RankCredentials.Parser.ParseFrom(File.ReadAllBytes(path));
            File.Delete(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidProtocolBufferException)
        {
            throw new MpiException(ErrorClass.InvalidArgument, $"The rank's credentials file {path} ({RankEnvironment.CredentialsFile}) cannot be read: {e.Message}; it is written by the PMPI agent that launched this rank, and read once.", e);
        }
        if (string.IsNullOrEmpty(credentials.JobToken)) throw Malformed(RankEnvironment.CredentialsFile, path, "a credentials file holding the job key");
        return credentials;
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
