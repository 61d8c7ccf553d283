namespace Pmpi.Hosting;

/// <summary>
/// Where a rank sits on its node: its place among its world's ranks there, how many there are, and which of its
/// world's nodes it is (<see cref="Rpc.RankEnvironment.LocalRank"/> and its siblings state the rules). Ranks that are
/// threads of one process share one node.
/// </summary>
internal readonly record struct NodePlace(int LocalRank, int LocalSize, int NodeRank);
