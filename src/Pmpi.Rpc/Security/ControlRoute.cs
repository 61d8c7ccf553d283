using System.Globalization;

namespace Pmpi.Rpc.Security;

/// <summary>Where a control call dialed to a gateway goes (<see cref="ControlRoute"/>).</summary>
public enum ControlTarget
{
    /// <summary>An agent the job's ticket names, by the host:port the master dials it at: Launch and Kill, and the uploads of its staged programs (MissingFiles, Upload).</summary>
    Agent,

    /// <summary>The gateway of a domain of the job: RegisterJob and RemoveJob.</summary>
    Gateway,

    /// <summary>The job's master: a rank's Register, Abort, Spawn and Linked.</summary>
    Master,
}

/// <summary>
/// What a control call states in its request headers when it crosses domains through gateways, as rank streams state
/// theirs (<see cref="RouteProof"/>): the job, where the call goes, and, for a rank's call to its master, the rank and
/// a proof under the job key. A master in one domain so reaches the agents and gateways of another through its own
/// domain's gateway, and a rank reaches a master of another domain through its own; between domains nothing but the
/// gateways' port is open. A gateway relays a control call only for a job registered with it, only a method its
/// destination serves, only when the call starts or ends in its domain, and only from a cluster member (a master, a
/// peer gateway) or, for a call to the master, from a rank proving the job key.
/// </summary>
public static class ControlRoute
{
    /// <summary>"agent HOST:PORT", "gateway DOMAIN" or "master".</summary>
    public const string DestinationHeader = "pmpi-control-to";

    private const string MasterProofDestination = "master";

    /// <summary>The headers of a master's call to an agent of another domain (<paramref name="authority"/>: host:port, as its ticket names it).</summary>
    public static IEnumerable<KeyValuePair<string, string>> ToAgent(string jobId, string authority) =>
        [new(RouteProof.JobHeader, jobId), new(DestinationHeader, $"agent {authority}")];

    /// <summary>The headers of a master's call to the gateway of <paramref name="domain"/>.</summary>
    public static IEnumerable<KeyValuePair<string, string>> ToGateway(string jobId, string domain) =>
        [new(RouteProof.JobHeader, jobId), new(DestinationHeader, $"gateway {domain}")];

    /// <summary>The headers of a rank's call to its master, with the proof that it holds the job key (base64, <paramref name="jobToken"/>).</summary>
    public static IEnumerable<KeyValuePair<string, string>> ToMaster(string jobToken, string jobId, int rank) =>
    [
        new(RouteProof.JobHeader, jobId),
        new(DestinationHeader, MasterProofDestination),
        new(RouteProof.SourceHeader, rank.ToString(CultureInfo.InvariantCulture)),
        new(RouteProof.ProofHeader, RouteProof.Compute(jobToken, jobId, rank, MasterProofDestination)),
    ];

    /// <summary>
    /// Reads the route a request states, without checking any proof: the job, the destination (<paramref name="name"/>
    /// is the agent's host:port or the gateway's domain; empty for the master) and, for the master, the calling rank
    /// (-1 otherwise). <paramref name="header"/> gives a request header's value by name, empty when absent;
    /// <paramref name="failure"/> says which header is missing or malformed.
    /// </summary>
    public static bool TryRead(Func<string, string> header, out string jobId, out ControlTarget target, out string name, out int source, out string failure)
    {
        ArgumentNullException.ThrowIfNull(header);
        jobId = header(RouteProof.JobHeader);
        var to = header(DestinationHeader);
        int space = to.IndexOf(' ', StringComparison.Ordinal);
        var kind = space < 0 ? to : to[..space];
        name = space < 0 ? "" : to[(space + 1)..];
        source = -1;
        target = ControlTarget.Master;
        failure = "";
        if (jobId.Length == 0) failure = $"no {RouteProof.JobHeader} header";
        else if (kind == "agent" && name.Length > 0) target = ControlTarget.Agent;
        else if (kind == "gateway" && name.Length > 0) target = ControlTarget.Gateway;
        else if (to != MasterProofDestination) failure = $"{DestinationHeader} is not 'agent HOST:PORT', 'gateway DOMAIN' or 'master'";
        else if (!RouteProof.TryRank(header(RouteProof.SourceHeader), out source)) failure = $"no valid {RouteProof.SourceHeader} header (the calling rank)";
        else if (header(RouteProof.ProofHeader).Length == 0) failure = $"no {RouteProof.ProofHeader} header";
        return failure.Length == 0;
    }

    /// <summary>
    /// Whether a rank's call to the master proves the job key (<paramref name="jobToken"/>), compared in constant time;
    /// <paramref name="header"/> gives a request header's value by name, empty when absent.
    /// </summary>
    public static bool ProvesMasterCall(Func<string, string> header, string jobToken, string jobId, int source)
    {
        ArgumentNullException.ThrowIfNull(header);
        return RouteProof.Matches(jobToken, jobId, source, MasterProofDestination, header(RouteProof.ProofHeader));
    }

    /// <summary>Whether <paramref name="path"/> is a method that <paramref name="target"/> serves; no other is relayed to it.</summary>
    public static bool Serves(ControlTarget target, string path) => target switch
    {
        ControlTarget.Agent => path is ServicePaths.Launch or ServicePaths.Kill or ServicePaths.MissingFiles or ServicePaths.Upload,
        ControlTarget.Gateway => path is ServicePaths.RegisterJob or ServicePaths.RemoveJob,
        _ => path is ServicePaths.Register or ServicePaths.Abort or ServicePaths.Spawn or ServicePaths.Linked,
    };
}
