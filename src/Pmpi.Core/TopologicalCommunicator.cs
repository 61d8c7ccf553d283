using Pmpi.Hosting;

namespace Pmpi;

/// <summary>An intracommunicator whose ranks carry a topology: a Cartesian grid or a graph (MPI.NET's base of both).</summary>
public abstract class TopologicalCommunicator : Intracommunicator
{
    private protected TopologicalCommunicator(RankRuntime runtime, int context, int[] members, int rank)
        : base(runtime, context, members, rank)
    {
    }

    /// <summary>The calling rank's neighbours.</summary>
    public int[] Neighbors => NeighborsOf(Rank);

    /// <summary>The neighbours of <paramref name="rank"/>.</summary>
    public abstract int[] NeighborsOf(int rank);

    /// <summary>The number of edges of the topology.</summary>
    public abstract int NumEdges { get; }
}
