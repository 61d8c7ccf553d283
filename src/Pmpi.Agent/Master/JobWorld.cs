using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Master;

/// <summary>
/// One world of the job, its first or one that its ranks spawned: the job ranks from <paramref name="first"/>. Its
/// ranks get the table (<see cref="Released"/>) once all have registered (<see cref="Complete"/>) and, for a
/// spawned world, its parents have linked to them.
/// </summary>
internal sealed class JobWorld(int first, int size, SpawnedWorld? spawned)
{
    public int First => first;

    public int Size => size;

    /// <summary>What the world's table tells its ranks and parents; null for the first world.</summary>
    public SpawnedWorld? Spawned => spawned;

    /// <summary>Ranks of the world registered so far (under the job's lock).</summary>
    public int Registered { get; set; }

    /// <summary>Ranks that exited with code 0 before any rank of the world registered, with their agent's name (under the job's lock).</summary>
    public Dictionary<int, string> LeftUnregistered { get; } = [];

    public TaskCompletionSource<RankTable> Complete { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public TaskCompletionSource<RankTable> Released { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}
