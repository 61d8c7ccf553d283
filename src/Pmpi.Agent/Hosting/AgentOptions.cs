using Pmpi.Rpc.Security;

namespace Pmpi.Agent.Hosting;

/// <summary>
/// Where an agent listens and how it presents its node. Checked when the agent starts: a bad value stops it with an
/// <see cref="Microsoft.Extensions.Options.OptionsValidationException"/> naming the option.
/// </summary>
public sealed class AgentOptions
{
    /// <summary>
    /// The IP address the Agent and Master services listen on. Defaults to 127.0.0.1 (this machine only); 0.0.0.0 or
    /// :: listens on every interface, as an agent other nodes call must.
    /// </summary>
    public string BindAddress { get; set; } = "127.0.0.1";

    /// <summary>The TCP port the services listen on, 0 to pick a free one. Defaults to 7300.</summary>
    public int Port { get; set; } = 7300;

    /// <summary>The node's administrative domain. Defaults to null: no domain.</summary>
    public string? Domain { get; set; }

    /// <summary>
    /// The gateway of <see cref="Domain"/> (host:port), as computation files name it; shown by <c>pmpi nodes</c>. Routes
    /// come from the computation file, not from here. Defaults to null: none stated.
    /// </summary>
    public string? Gateway { get; set; }

    /// <summary>
    /// How many ranks a computation that allows oversubscription may run per slot, at most: the hard cap on what the
    /// agent starts at once (<see cref="Slots"/> × 8), so no computation file or `-n` can fork without limit.
    /// </summary>
    public const int OversubscribedRanksPerSlot = 8;

    /// <summary>
    /// Ranks this node takes at once, at least 1. Defaults to the number of logical cores. A launch beyond the free
    /// slots is refused unless its computation allows oversubscription, and then up to
    /// <see cref="OversubscribedRanksPerSlot"/> ranks per slot.
    /// </summary>
    public int Slots { get; set; } = System.Environment.ProcessorCount;

    /// <summary>
    /// How long a rank's runtime (for this agent), an agent (for this agent as master) or a master (for this agent,
    /// which then kills the job's ranks here) may fall silent before the job is aborted naming it. Ranks and agents
    /// beat every second from a thread of their own, and a master's HTTP/2 stack answers the agent's pings every
    /// second, so a long compute phase never trips it; a stopped (SIGSTOP) or frozen process does. Defaults to 5
    /// seconds, so a job ends within 10 s of a freeze.
    /// </summary>
    public TimeSpan HeartbeatTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long, as master, a job waits for all its ranks to register before it is aborted naming the ranks still
    /// missing. Defaults to 60 seconds.
    /// </summary>
    public TimeSpan RegistrationTimeout { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// The IP address rank endpoints listen on and advertise to their peers: an address of this node that the other
    /// nodes reach. Defaults to 127.0.0.1, which serves jobs whose ranks all run on this machine.
    /// </summary>
    public string RankBindAddress { get; set; } = "127.0.0.1";

    /// <summary>
    /// How callers prove they belong to the cluster and how traffic is protected: <see cref="RpcSecurity.MutualTls"/>
    /// with the cluster credential for a daemon, <see cref="RpcSecurity.ForThisProcess"/> for an embedded agent on
    /// loopback, <see cref="RpcSecurity.Insecure"/> only when asked for. Defaults to null, which the validator refuses:
    /// an agent never starts unauthenticated by accident.
    /// </summary>
    public RpcSecurity? Security { get; set; }

    /// <summary>
    /// What rank 0 of a job's first world reads as its standard input when this agent launches it: <c>pmpi run</c>
    /// gives its embedded agent its own input, as mpirun passes its input to rank 0. The other ranks' input is empty.
    /// Defaults to null: every rank's input is empty, as a daemon's ranks' always is.
    /// </summary>
    public Stream? RankZeroInput { get; set; }

    /// <summary>
    /// Where the agent keeps the staged programs shipped to it (<c>pmpi run --stage</c>), each file once by its SHA-256.
    /// Defaults to <c>pmpi/staged</c> in the agent user's local application data (<c>~/.local/share</c> on Linux,
    /// <c>%LOCALAPPDATA%</c> on Windows); `pmpi run`'s embedded agent uses the same store, so reruns ship nothing again.
    /// </summary>
    public string StagingDirectory { get; set; } = Path.Combine(
        System.Environment.GetFolderPath(System.Environment.SpecialFolder.LocalApplicationData, System.Environment.SpecialFolderOption.DoNotVerify), "pmpi", "staged");

    /// <summary>How long a staged file or program that no launch used stays in <see cref="StagingDirectory"/>. Defaults to 7 days.</summary>
    public TimeSpan KeepStaged { get; set; } = TimeSpan.FromDays(7);

    /// <summary>
    /// The most bytes of staged files the agent keeps in <see cref="StagingDirectory"/>; the least recently used go
    /// first to make room, none that a running job's program holds, and what still does not fit is refused naming the
    /// limit. Defaults to 10 GiB.
    /// </summary>
    public long StagingLimit { get; set; } = 10L << 30;
}
