namespace Pmpi.Agent.Services;

/// <summary>How an agent presents its node.</summary>
public sealed class AgentOptions
{
    /// <summary>The node's administrative domain. Defaults to null: no domain.</summary>
    public string? Domain { get; init; }

    /// <summary>Ranks this node takes before it is oversubscribed. Defaults to the number of logical cores.</summary>
    public int Slots { get; init; } = System.Environment.ProcessorCount;

    /// <summary>
    /// The address rank endpoints listen on and advertise to their peers: an address of this node that the other
    /// nodes reach. Defaults to 127.0.0.1, which serves jobs whose ranks all run on this machine.
    /// </summary>
    public string RankBindAddress { get; init; } = "127.0.0.1";
}
