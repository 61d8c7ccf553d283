using System.Diagnostics.Metrics;
using Pmpi.Agent.Hosting;

namespace Pmpi.Agent.Node;

/// <summary>
/// The agent's meter (<see cref="AgentHost.MeterName"/>, on the host's meter factory): launches and ranks running,
/// ranks started and how they ended, launches refused. dotnet-counters shows it, and the daemon exports it over OTLP
/// when a collector is configured.
/// </summary>
internal sealed class AgentMeters
{
    private static readonly KeyValuePair<string, object?> Ok = new("pmpi.outcome", "ok"), Failed = new("pmpi.outcome", "failed"), Killed = new("pmpi.outcome", "killed");

    private readonly UpDownCounter<long> _launchesRunning, _ranksRunning;
    private readonly Counter<long> _ranksStarted, _ranksExited, _launchesRefused;

    public AgentMeters(IMeterFactory factory)
    {
        Meter = factory.Create(AgentHost.MeterName, typeof(AgentMeters).Assembly.GetName().Version?.ToString());
        _launchesRunning = Meter.CreateUpDownCounter<long>("pmpi.agent.launches.running", "{launch}", "Launch calls running here: a job's first world, and each world its ranks spawned");
        _ranksRunning = Meter.CreateUpDownCounter<long>("pmpi.agent.ranks.running", "{rank}", "Ranks of the running launches (the slots they hold)");
        _ranksStarted = Meter.CreateCounter<long>("pmpi.agent.ranks.started", "{rank}", "Rank processes started");
        _ranksExited = Meter.CreateCounter<long>("pmpi.agent.ranks.exited", "{rank}", "Rank processes that exited, by pmpi.outcome: ok (exit code 0), failed, killed");
        _launchesRefused = Meter.CreateCounter<long>("pmpi.agent.launches.refused", "{launch}", "Launches refused: a program missing, too few free slots, the job already running, the agent stopping");
    }

    /// <summary>The meter, for a listener that must tell this agent's from another's in the same process.</summary>
    public Meter Meter { get; }

    public void LaunchStarted() => _launchesRunning.Add(1);

    public void LaunchEnded() => _launchesRunning.Add(-1);

    public void LaunchRefused() => _launchesRefused.Add(1);

    public void SlotsTaken(int ranks) => _ranksRunning.Add(ranks);

    public void SlotsReleased(int ranks) => _ranksRunning.Add(-ranks);

    public void RankStarted() => _ranksStarted.Add(1);

    public void RankExited(int code, bool killed) => _ranksExited.Add(1, killed ? Killed : code == 0 ? Ok : Failed);
}
