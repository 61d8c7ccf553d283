using Pmpi.Collectives;

namespace Pmpi;

/// <summary>
/// An intracommunicator whose ranks form a Cartesian grid (MPI_Cart_create), in row-major order: the last
/// dimension varies fastest. Neighbours along a dimension come from <see cref="Shift"/>.
/// </summary>
public sealed class CartesianCommunicator : TopologicalCommunicator
{
    private readonly int[] _dimensions;
    private readonly bool[] _periodic;
    private Neighborhood? _neighborhood;

    /// <summary>
    /// Arranges the ranks of <paramref name="oldComm"/> as a grid of <paramref name="dims"/> (collective). The grid
    /// must hold exactly <paramref name="oldComm"/>'s ranks (use <see cref="ComputeDimensions"/> to choose dims, or
    /// Split first to shrink the communicator). Ranks keep their order: <paramref name="reorder"/> is accepted and ignored.
    /// </summary>
    public CartesianCommunicator(Intracommunicator oldComm, int ndims, int[] dims, bool[] periods, bool reorder)
        : base(CheckedParent(oldComm, ndims, dims, periods).Runtime, oldComm.AgreeOnContext(), oldComm.Members.ToArray(), oldComm.Rank)
    {
        _ = reorder;
        _dimensions = (int[])dims.Clone();
        _periodic = (bool[])periods.Clone();
    }

    /// <summary>The extent of each dimension.</summary>
    public int[] Dimensions => (int[])_dimensions.Clone();

    /// <summary>Whether each dimension wraps around.</summary>
    public bool[] Periodic => (bool[])_periodic.Clone();

    /// <summary>The calling rank's coordinates.</summary>
    public int[] Coordinates => GetCartesianCoordinates(Rank);

    /// <summary>The coordinates of <paramref name="rank"/> (MPI_Cart_coords).</summary>
    public int[] GetCartesianCoordinates(int rank)
    {
        CheckRank(rank, nameof(rank));
        var coordinates = new int[_dimensions.Length];
        for (int d = _dimensions.Length - 1; d >= 0; d--)
        {
            coordinates[d] = rank % _dimensions[d];
            rank /= _dimensions[d];
        }
        return coordinates;
    }

    /// <summary>The rank at <paramref name="coords"/>; periodic dimensions wrap, others must be in range (MPI_Cart_rank).</summary>
    public int GetCartesianRank(int[] coords)
    {
        ArgumentNullException.ThrowIfNull(coords);
        if (coords.Length != _dimensions.Length)
            throw new MpiException(ErrorClass.InvalidArgument, $"Coordinates [{string.Join(", ", coords)}] have {coords.Length} dimensions; the grid has {_dimensions.Length}.");
        int rank = 0;
        for (int d = 0; d < _dimensions.Length; d++)
        {
            int c = coords[d];
            if (_periodic[d]) c = ((c % _dimensions[d]) + _dimensions[d]) % _dimensions[d];
            else if (c < 0 || c >= _dimensions[d])
                throw new MpiException(ErrorClass.InvalidRank, $"Coordinate {c} is outside non-periodic dimension {d} of extent {_dimensions[d]}.");
            rank = rank * _dimensions[d] + c;
        }
        return rank;
    }

    /// <summary>
    /// The ranks <paramref name="disp"/> steps back and forward along <paramref name="direction"/> (MPI_Cart_shift):
    /// receive from <paramref name="source"/>, send to <paramref name="dest"/>. Off a non-periodic edge they are
    /// <see cref="Communicator.ProcNull"/>.
    /// </summary>
    public void Shift(int direction, int disp, out int source, out int dest)
    {
        if ((uint)direction >= (uint)_dimensions.Length)
            throw new MpiException(ErrorClass.InvalidArgument, $"Direction {direction} is not a dimension of this {_dimensions.Length}-dimensional grid.");
        var coordinates = Coordinates;
        source = Neighbour(coordinates, direction, -disp);
        dest = Neighbour(coordinates, direction, disp);
    }

    /// <summary>
    /// The ranks one step away from <paramref name="rank"/> along each dimension, down then up (MPI.NET's order);
    /// across a periodic edge too, unless the dimension is too short for that step to reach another rank.
    /// </summary>
    public override int[] NeighborsOf(int rank)
    {
        var coordinates = GetCartesianCoordinates(rank);
        var neighbours = new List<int>();
        for (int d = 0; d < _dimensions.Length; d++)
        {
            bool wraps = _periodic[d] && _dimensions[d] > 2;
            if (coordinates[d] > 0 || wraps) neighbours.Add(Neighbour(coordinates, d, -1));
            if (coordinates[d] < _dimensions[d] - 1 || wraps) neighbours.Add(Neighbour(coordinates, d, +1));
        }
        return [.. neighbours];
    }

    /// <summary>
    /// Two slots per dimension, down then up (MPI's order). A rank sends down first; its down neighbour takes that as
    /// the message from its up neighbour, so each rank posts up before down, which keeps the pairs right where one
    /// rank is both neighbours (a periodic dimension of one or two ranks).
    /// </summary>
    internal override Neighborhood Neighborhood => _neighborhood ??= NeighborhoodOfRank();

    private Neighborhood NeighborhoodOfRank()
    {
        var coordinates = Coordinates;
        int[] slots = [.. Enumerable.Range(0, _dimensions.Length).SelectMany(d => new[] { Neighbour(coordinates, d, -1), Neighbour(coordinates, d, +1) })];
        return new Neighborhood(slots, slots, [.. Enumerable.Range(0, _dimensions.Length).SelectMany(d => new[] { 2 * d + 1, 2 * d })]);
    }

    /// <summary>
    /// The grid's edges as MPI.NET counts them: each line of d ranks along a dimension has d - 1, and one more, the
    /// wrap-around, where the dimension is periodic, even where the wrap joins ranks already adjacent (d of 1 or 2,
    /// where <see cref="NeighborsOf"/> lists no neighbour twice).
    /// </summary>
    public override int NumEdges
    {
        get
        {
            int ranks = _dimensions.Aggregate(1, (product, extent) => product * extent);
            return Enumerable.Range(0, _dimensions.Length).Sum(d => (_dimensions[d] - 1 + (_periodic[d] ? 1 : 0)) * (ranks / _dimensions[d]));
        }
    }

    /// <summary>
    /// The sub-grid through the calling rank that keeps the dimensions where <paramref name="remain_dims"/> is non-zero
    /// (MPI_Cart_sub; collective): ranks differing only in those coordinates share one, in row-major order.
    /// </summary>
#pragma warning disable CA1707, IDE1006 // MPI.NET's parameter name
    public CartesianCommunicator Subgrid(int[] remain_dims)
#pragma warning restore CA1707, IDE1006
    {
        ArgumentNullException.ThrowIfNull(remain_dims);
        if (remain_dims.Length != _dimensions.Length)
            throw new MpiException(ErrorClass.InvalidArgument, $"remain_dims has {remain_dims.Length} entries; the grid has {_dimensions.Length} dimensions.");
        var coordinates = Coordinates;
        int color = 0, key = 0;
        for (int d = 0; d < _dimensions.Length; d++)
        {
            if (remain_dims[d] != 0) key = key * _dimensions[d] + coordinates[d];
            else color = color * _dimensions[d] + coordinates[d];
        }
        var kept = Enumerable.Range(0, _dimensions.Length).Where(d => remain_dims[d] != 0).ToArray();
        using var part = Split(color, key)!;
        return new CartesianCommunicator(part, kept.Length, [.. kept.Select(d => _dimensions[d])], [.. kept.Select(d => _periodic[d])], reorder: false);
    }

    /// <summary>The rank the calling rank would have in such a grid (MPI_Cart_map): its own, or <see cref="Intracommunicator.Undefined"/> if the grid is smaller.</summary>
    public static int Map(Intracommunicator oldcomm, int ndims, int[] dims, bool[] periods)
    {
        ArgumentNullException.ThrowIfNull(oldcomm);
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentNullException.ThrowIfNull(periods);
        if (dims.Length != ndims || periods.Length != ndims)
            throw new MpiException(ErrorClass.InvalidArgument, $"ndims is {ndims} but dims has {dims.Length} entries and periods {periods.Length}.");
        return oldcomm.Rank < dims.Aggregate(1L, (a, b) => a * b) ? oldcomm.Rank : Undefined;
    }

    /// <summary>
    /// Fills the zero entries of <paramref name="dims"/> so the grid holds <paramref name="nnodes"/> ranks with
    /// dimensions as close to each other as possible, largest first (MPI_Dims_create).
    /// </summary>
    public static void ComputeDimensions(int nnodes, int ndims, ref int[] dims)
    {
        ArgumentNullException.ThrowIfNull(dims);
        if (dims.Length != ndims) throw new MpiException(ErrorClass.InvalidArgument, $"dims has {dims.Length} entries but ndims is {ndims}.");
        int fixedProduct = dims.Where(d => d > 0).Aggregate(1, (a, b) => a * b);
        if (dims.Any(d => d < 0) || nnodes % fixedProduct != 0)
            throw new MpiException(ErrorClass.InvalidArgument, $"{nnodes} ranks cannot fill a grid with fixed dimensions [{string.Join(", ", dims)}].");
        int free = dims.Count(d => d == 0);
        if (free == 0) return;
        // Deal the prime factors, largest first, to the currently smallest free dimension.
        var extents = Enumerable.Repeat(1, free).ToArray();
        foreach (var factor in PrimeFactors(nnodes / fixedProduct).OrderDescending())
            extents[Array.IndexOf(extents, extents.Min())] *= factor;
        Array.Sort(extents, (a, b) => b.CompareTo(a));
        for (int d = 0, next = 0; d < dims.Length; d++)
            if (dims[d] == 0) dims[d] = extents[next++];
    }

    private int Neighbour(int[] coordinates, int direction, int offset)
    {
        var moved = (int[])coordinates.Clone();
        moved[direction] += offset;
        if (!_periodic[direction] && (moved[direction] < 0 || moved[direction] >= _dimensions[direction])) return ProcNull;
        return GetCartesianRank(moved);
    }

    private static IEnumerable<int> PrimeFactors(int n)
    {
        for (int p = 2; p * p <= n; p++)
            for (; n % p == 0; n /= p) yield return p;
        if (n > 1) yield return n;
    }

    private static Intracommunicator CheckedParent(Intracommunicator oldComm, int ndims, int[] dims, bool[] periods)
    {
        ArgumentNullException.ThrowIfNull(oldComm);
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentNullException.ThrowIfNull(periods);
        if (dims.Length != ndims || periods.Length != ndims)
            throw new MpiException(ErrorClass.InvalidArgument, $"ndims is {ndims} but dims has {dims.Length} entries and periods {periods.Length}.");
        long cells = dims.Aggregate(1L, (a, b) => a * b);
        if (dims.Any(d => d < 1) || cells != oldComm.Size)
            throw new MpiException(ErrorClass.InvalidArgument, $"A grid of [{string.Join(", ", dims)}] holds {cells} ranks; the communicator has {oldComm.Size}.");
        return oldComm;
    }
}
