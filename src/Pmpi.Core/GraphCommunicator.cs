using Pmpi.Collectives;

namespace Pmpi;

/// <summary>
/// An intracommunicator whose ranks are the nodes of a graph (MPI_Graph_create): rank i's neighbours are
/// <c>edges[i]</c>. Edges are as given, so a directed edge stays one-way.
/// </summary>
public sealed class GraphCommunicator : TopologicalCommunicator
{
    private readonly int[][] _edges;
    private Neighborhood? _neighborhood;

    /// <summary>
    /// Gives the ranks of <paramref name="oldComm"/> the graph <paramref name="edges"/> (collective): one list of
    /// neighbours per rank, the same on every rank. Ranks keep their order: <paramref name="reorder"/> is accepted and ignored.
    /// </summary>
    public GraphCommunicator(Intracommunicator oldComm, int[][] edges, bool reorder)
        : base(CheckedParent(oldComm, edges).Runtime, oldComm.AgreeOnContext(), oldComm.Members.ToArray(), oldComm.Rank)
    {
        _ = reorder;
        _edges = [.. edges.Select(e => (int[])e.Clone())];
    }

    /// <summary>Every rank's neighbours, by rank.</summary>
    public int[][] Edges => [.. _edges.Select(e => (int[])e.Clone())];

    /// <summary>The number of edges: the total length of the neighbour lists (MPI_Graphdims_get).</summary>
    public override int NumEdges => _edges.Sum(e => e.Length);

    /// <summary>The neighbours of <paramref name="rank"/> (MPI_Graph_neighbors).</summary>
    public override int[] NeighborsOf(int rank)
    {
        CheckRank(rank, nameof(rank));
        return (int[])_edges[rank].Clone();
    }

    /// <summary>
    /// One slot per entry of the calling rank's neighbour list, to send and to receive (MPI's order for a graph). The
    /// graph must be symmetric, each edge listed by both its ends as often, or some rank would wait for a message
    /// its neighbour never sends (MPI makes such a call erroneous; here it fails naming the edge).
    /// </summary>
    internal override Neighborhood Neighborhood => _neighborhood ??= SymmetricNeighborhood();

    private Neighborhood SymmetricNeighborhood()
    {
        for (int node = 0; node < _edges.Length; node++)
        {
            foreach (int neighbour in _edges[node].Distinct())
            {
                int there = _edges[node].Count(n => n == neighbour), back = _edges[neighbour].Count(n => n == node);
                if (there != back)
                    throw new MpiException(ErrorClass.InvalidArgument,
                        $"Neighbourhood collectives need a symmetric graph: node {node} lists {neighbour} {there} time(s), node {neighbour} lists {node} {back} time(s).");
            }
        }
        var mine = _edges[Rank];
        return new Neighborhood(mine, mine, [.. Enumerable.Range(0, mine.Length)]);
    }

    /// <summary>The rank the calling rank would have in a graph of <paramref name="edges"/> (MPI_Graph_map): its own, or <see cref="Intracommunicator.Undefined"/> if the graph has fewer nodes.</summary>
    public static int Map(Intracommunicator oldcomm, int[][] edges)
    {
        ArgumentNullException.ThrowIfNull(oldcomm);
        ArgumentNullException.ThrowIfNull(edges);
        return oldcomm.Rank < edges.Length ? oldcomm.Rank : Undefined;
    }

    private static Intracommunicator CheckedParent(Intracommunicator oldComm, int[][] edges)
    {
        ArgumentNullException.ThrowIfNull(oldComm);
        ArgumentNullException.ThrowIfNull(edges);
        if (edges.Length != oldComm.Size)
            throw new MpiException(ErrorClass.InvalidArgument, $"The graph has {edges.Length} nodes; the communicator has {oldComm.Size} ranks, one per node.");
        for (int node = 0; node < edges.Length; node++)
        {
            if (edges[node] is null) throw new MpiException(ErrorClass.InvalidArgument, $"Node {node} of the graph has no neighbour list (null); give an empty one.");
            foreach (var neighbour in edges[node])
                if ((uint)neighbour >= (uint)edges.Length)
                    throw new MpiException(ErrorClass.InvalidRank, $"Node {node} of the graph names neighbour {neighbour}, which is not one of its {edges.Length} nodes.");
        }
        return oldComm;
    }
}
