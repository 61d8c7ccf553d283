using Pmpi.Rpc.V1;

namespace Pmpi.Hosting;

/// <summary>
/// How a rank that an agent launched takes part in spawning ranks into its job (MPI_Comm_spawn): the root asks the
/// master, and every spawning rank links to the new world before the root releases it.
/// </summary>
internal interface IRankSpawner
{
    /// <summary>At the root: starts the ranks; the job's table once they have all registered.</summary>
    /// <exception cref="MpiException">Spawn: the master refused, or the ranks did not start.</exception>
    RankTable Spawn(SpawnRequest request);

    /// <summary>On every spawning rank: links this rank to the spawned world's ranks, as <paramref name="table"/> places them.</summary>
    /// <exception cref="MpiException">Transport: a spawned rank cannot be reached.</exception>
    void Connect(RankTable table);

    /// <summary>At the root, once every spawning rank has linked: the spawned world's ranks get their table and run.</summary>
    /// <exception cref="MpiException">Spawn: the master refused or was unreachable.</exception>
    void Release(int worldFirst);
}
