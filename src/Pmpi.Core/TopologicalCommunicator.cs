using Pmpi.Collectives;
using Pmpi.Hosting;
using Pmpi.Matching;

namespace Pmpi;

/// <summary>
/// An intracommunicator whose ranks carry a topology: a Cartesian grid or a graph (MPI.NET's base of both), with the
/// neighbourhood collectives (MPI-3 MPI_Neighbor_*): each rank exchanges with its neighbours only. On a grid a rank
/// has two slots per dimension, down then up (<see cref="Communicator.ProcNull"/> off a non-periodic edge, whose slot
/// receives default); on a graph, one per entry of its neighbour list. Every form sends each slot an array (a
/// single value as an array of one), so a rank calling one form meets another's of the same call in any language.
/// </summary>
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

    /// <summary>The calling rank's neighbourhood, slot by slot.</summary>
    internal abstract Neighborhood Neighborhood { get; }

    /// <summary>Sends <paramref name="value"/> to every neighbour; gives what each sent, by slot (MPI_Neighbor_allgather).</summary>
    public T[] NeighborAllgather<T>(T value) => Singles(NeighborhoodAlgorithms.Exchange(this, CollectiveStep.NeighborAllgather, _ => new[] { value }));

    /// <summary>
    /// Sends <paramref name="values"/> to every neighbour; gives their arrays concatenated by slot (MPI_Neighbor_allgatherv).
    /// <paramref name="counts"/>, one per slot, is the length each neighbour sends.
    /// </summary>
    public T[] NeighborAllgatherFlattened<T>(T[] values, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(values);
        return Concatenated(NeighborhoodAlgorithms.Exchange(this, CollectiveStep.NeighborAllgather, _ => values), counts, nameof(counts));
    }

    /// <summary>Sends <paramref name="values"/>[slot] to each slot's neighbour; gives what each sent here, by slot (MPI_Neighbor_alltoall).</summary>
    public T[] NeighborAlltoall<T>(T[] values)
    {
        CheckSlots(values, nameof(values));
        return Singles(NeighborhoodAlgorithms.Exchange(this, CollectiveStep.NeighborAlltoall, slot => new[] { values[slot] }));
    }

    /// <summary>
    /// Sends consecutive blocks of <paramref name="sendCounts"/>[slot] elements to each slot's neighbour; gives the
    /// blocks of <paramref name="receiveCounts"/>[slot] elements each sent here, concatenated by slot (MPI_Neighbor_alltoallv).
    /// </summary>
    public T[] NeighborAlltoallFlattened<T>(T[] values, int[] sendCounts, int[] receiveCounts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckSlots(sendCounts, nameof(sendCounts));
        if (sendCounts.Sum() != values.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"'{nameof(sendCounts)}' adds up to {sendCounts.Sum()} elements; '{nameof(values)}' holds {values.Length}.");
        var starts = new int[sendCounts.Length];
        for (int slot = 1; slot < starts.Length; slot++) starts[slot] = starts[slot - 1] + sendCounts[slot - 1];
        return Concatenated(NeighborhoodAlgorithms.Exchange(this, CollectiveStep.NeighborAlltoall, slot => values[starts[slot]..(starts[slot] + sendCounts[slot])]),
            receiveCounts, nameof(receiveCounts));
    }

    /// <summary>Starts a <see cref="NeighborAllgather{T}"/> (MPI_Ineighbor_allgather).</summary>
    public CollectiveRequest<T[]> ImmediateNeighborAllgather<T>(T value) => Sequence.Start(() => NeighborAllgather(value));

    /// <summary>Starts a <see cref="NeighborAlltoall{T}"/> (MPI_Ineighbor_alltoall).</summary>
    public CollectiveRequest<T[]> ImmediateNeighborAlltoall<T>(T[] values)
    {
        CheckSlots(values, nameof(values));
        return Sequence.Start(() => NeighborAlltoall(values));
    }

    /// <summary>Starts a <see cref="NeighborAllgatherFlattened{T}"/> (MPI_Ineighbor_allgatherv).</summary>
    public CollectiveRequest<T[]> ImmediateNeighborAllgatherFlattened<T>(T[] values, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckSlots(counts, nameof(counts));
        return Sequence.Start(() => NeighborAllgatherFlattened(values, counts));
    }

    /// <summary>Starts a <see cref="NeighborAlltoallFlattened{T}"/> (MPI_Ineighbor_alltoallv).</summary>
    public CollectiveRequest<T[]> ImmediateNeighborAlltoallFlattened<T>(T[] values, int[] sendCounts, int[] receiveCounts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckSlots(sendCounts, nameof(sendCounts));
        CheckSlots(receiveCounts, nameof(receiveCounts));
        return Sequence.Start(() => NeighborAlltoallFlattened(values, sendCounts, receiveCounts));
    }

    // The value of each slot's array of one; default where no neighbour sent (ProcNull).
    private T[] Singles<T>(T[][] blocks) => Concatenated(blocks, [.. blocks.Select(_ => 1)], "the neighbourhood's single values");

    private T[] Concatenated<T>(T[][] blocks, int[] counts, string argument)
    {
        CheckSlots(counts, argument);
        var sources = Neighborhood.Sources;
        var result = new T[counts.Sum()];
        for (int slot = 0, at = 0; slot < blocks.Length; at += counts[slot], slot++)
        {
            if (sources[slot] == ProcNull) continue;
            if (blocks[slot].Length != counts[slot])
                throw new MpiException(ErrorClass.InvalidCount,
                    $"Rank {Rank}'s neighbour {sources[slot]} (slot {slot}) sent {blocks[slot].Length} elements where '{argument}' says {counts[slot]}.");
            blocks[slot].CopyTo(result, at);
        }
        return result;
    }

    private void CheckSlots<TElement>(TElement[] perSlot, string argument)
    {
        ArgumentNullException.ThrowIfNull(perSlot, argument);
        int slots = Neighborhood.Destinations.Length;
        if (perSlot.Length != slots)
            throw new MpiException(ErrorClass.InvalidCount, $"'{argument}' must hold {slots} elements, one per neighbour of rank {Rank}; it holds {perSlot.Length}.");
    }
}
