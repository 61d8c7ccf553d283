namespace Pmpi.Agent.NodeInfo;

/// <summary>
/// Describes the machine an agent runs on. One implementation per operating system, chosen by
/// <see cref="NodeInfoProviderFactory.Create"/>. Domain, slots and running jobs are not the machine's but the agent's,
/// so they come from the agent's options, not from here.
/// </summary>
public interface INodeInfoProvider
{
    /// <summary>Samples the machine now. Cheap enough to call per status request (a few small file reads or system calls).</summary>
    NodeMetadata GetMetadata();
}
