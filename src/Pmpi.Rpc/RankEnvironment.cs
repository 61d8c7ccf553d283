namespace Pmpi.Rpc;

/// <summary>
/// The environment variables through which an agent tells a rank process who it is: the contract between the
/// agent that launches ranks and the library inside them.
/// </summary>
public static class RankEnvironment
{
    /// <summary>The job's id.</summary>
    public const string JobId = "PMPI_JOB_ID";

    /// <summary>The rank's place in the job, from 0: in its world, plus <see cref="WorldFirst"/>.</summary>
    public const string Rank = "PMPI_RANK";

    /// <summary>The number of ranks in the rank's world.</summary>
    public const string Size = "PMPI_SIZE";

    /// <summary>
    /// The rank's place among its world's ranks on its node, from 0 in world-rank order (Open MPI's
    /// OMPI_COMM_WORLD_LOCAL_RANK), set by the master for every launched process, whether or not it runs PMPI.
    /// </summary>
    public const string LocalRank = "PMPI_LOCAL_RANK";

    /// <summary>How many ranks of the rank's world run on its node (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE).</summary>
    public const string LocalSize = "PMPI_LOCAL_SIZE";

    /// <summary>
    /// The index of the rank's node among the nodes its world runs on, from 0, numbered in the order of each node's
    /// first rank (torchrun's NODE_RANK, Slurm's SLURM_NODEID; not Open MPI's OMPI_COMM_WORLD_NODE_RANK, which is a
    /// local rank).
    /// </summary>
    public const string NodeRank = "PMPI_NODE_RANK";

    /// <summary>
    /// The job rank of the world's rank 0, set for the ranks of a world that ranks of the job spawned
    /// (MPI_Comm_spawn); unset (0) for the job's first world.
    /// </summary>
    public const string WorldFirst = "PMPI_WORLD_FIRST";

    /// <summary>The master's address (http://host:port), where the rank registers.</summary>
    public const string Master = "PMPI_MASTER";

    /// <summary>
    /// The gateway (http(s)://host:port) through which the rank reaches its master, set when the master serves another
    /// domain that the rank's does not reach directly: the rank's calls to the master go there, stating their route
    /// (<see cref="Security.ControlRoute"/>).
    /// </summary>
    public const string MasterGateway = "PMPI_MASTER_GATEWAY";

    /// <summary>
    /// The path of an owner-only file holding the rank's <see cref="V1.RankCredentials"/> (its job key, and the CA its
    /// master's certificate chains to). The rank deletes the file once read: the key is never in argv or the environment.
    /// </summary>
    public const string CredentialsFile = "PMPI_JOB_KEY_FILE";

    /// <summary>The rank's administrative domain, if the computation declares domains.</summary>
    public const string Domain = "PMPI_DOMAIN";

    /// <summary>"1" when the rank's runtime is to say on its standard error where it is bound (<c>pmpi run --report-bindings</c>).</summary>
    public const string ReportBindings = "PMPI_REPORT_BINDINGS";

    /// <summary>The address the rank's endpoint listens on and advertises; loopback when unset.</summary>
    public const string BindAddress = "PMPI_BIND_ADDRESS";

    /// <summary>The process id of the agent that launched the rank: a rank whose agent is gone ends itself.</summary>
    public const string AgentProcessId = "PMPI_AGENT_PID";

    /// <summary>
    /// "1" when every rank of the job runs on this node and they link through shared memory: the rank opens no
    /// RankTransport endpoint (no server, no port), since no peer would dial it.
    /// </summary>
    public const string NodeLocal = "PMPI_NODE_LOCAL";

    /// <summary>
    /// The handle of an inherited pipe (a file descriptor on Unix, a handle on Windows) to which the rank's runtime
    /// writes a byte every second; an agent that hears nothing for its heartbeat timeout reports the rank frozen.
    /// </summary>
    public const string Heartbeat = "PMPI_HEARTBEAT";

    /// <summary>
    /// The agent's heartbeat timeout in whole seconds, set beside <see cref="Heartbeat"/>: a rank whose agent has read
    /// none of its beats for that long (a stopped or frozen agent) ends itself, as the agent would report the rank.
    /// </summary>
    public const string HeartbeatTimeout = "PMPI_HEARTBEAT_TIMEOUT";

    /// <summary>What the runtime writes on the heartbeat pipe beats: 1.</summary>
    public const byte Beat = 1;

    /// <summary>
    /// What the runtime of a rank given its table at launch (<see cref="V1.RankCredentials.Table"/>) writes once on the
    /// heartbeat pipe when it has joined its job: its registration, which the agent reports to the master.
    /// </summary>
    public const byte JoinedBeat = 2;

    /// <summary>
    /// What the runtime writes once on the heartbeat pipe when the rank finalized PMPI (MPI_Finalize): a rank that
    /// joined its job and then ends without it, even with exit code 0, leaves its peers waiting, so the job fails.
    /// </summary>
    public const byte FinalizedBeat = 3;

    /// <summary>
    /// What the runtime writes first on the heartbeat pipe: that it will write <see cref="FinalizedBeat"/>. An agent
    /// holds a rank to finalizing only then, so a rank program built with an older PMPI, which does not, still runs.
    /// </summary>
    public const byte ReportsFinalizeBeat = 4;
}
