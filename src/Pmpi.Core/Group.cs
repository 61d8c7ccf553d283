namespace Pmpi;

/// <summary>How two groups or communicators relate (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).</summary>
public enum Comparison
{
    /// <summary>The same object, or the same members in the same order (groups).</summary>
    Identical,
    /// <summary>Communicators with the same members in the same order but different contexts.</summary>
    Congruent,
    /// <summary>The same members in a different order.</summary>
    Similar,
    /// <summary>Different members.</summary>
    Unequal,
}

/// <summary>An ordered set of ranks (MPI_Group), held as the members' world ranks; group algebra never communicates.</summary>
public sealed class Group
{
    /// <summary>Returned by <see cref="TranslateRanks"/> for a rank absent from the other group (MPI_UNDEFINED).</summary>
    public const int NoProcess = -1;

    private readonly int[] _members;

    internal Group(int[] members) => _members = members;

    /// <summary>The group with no members (MPI_GROUP_EMPTY).</summary>
    public static Group Empty { get; } = new([]);

#pragma warning disable CA1707, CA1708, IDE1006 // MPI.NET's spelling
    /// <summary>The same as <see cref="Empty"/> (MPI.NET's name).</summary>
    public static Group empty => Empty;
#pragma warning restore CA1707, CA1708, IDE1006

    /// <summary>The number of ranks in the group.</summary>
    public int Size => _members.Length;

    /// <summary>The calling rank's rank in this group, or <see cref="NoProcess"/> if it is not a member.</summary>
    public int Rank => Array.IndexOf(_members, Communicator.World.Rank);

    internal ReadOnlySpan<int> Members => _members;

    /// <summary>The members of this group named by <paramref name="ranks"/>, in that order (MPI_Group_incl).</summary>
    public Group IncludeOnly(int[] ranks)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        var members = new int[ranks.Length];
        for (int i = 0; i < ranks.Length; i++) members[i] = _members[CheckRank(ranks[i], nameof(ranks))];
        if (members.Distinct().Count() != members.Length)
            throw new MpiException(ErrorClass.InvalidRank, $"Ranks [{string.Join(", ", ranks)}] (argument 'ranks') name a member twice.");
        return new Group(members);
    }

    /// <summary>This group without the members named by <paramref name="ranks"/> (MPI_Group_excl).</summary>
    public Group Exclude(int[] ranks)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        var excluded = new HashSet<int>();
        foreach (var rank in ranks)
            if (!excluded.Add(CheckRank(rank, nameof(ranks))))
                throw new MpiException(ErrorClass.InvalidRank, $"Ranks [{string.Join(", ", ranks)}] (argument 'ranks') name rank {rank} twice.");
        return new Group(_members.Where((_, i) => !excluded.Contains(i)).ToArray());
    }

    /// <summary>Members of either group: all of <paramref name="first"/>, then the rest of <paramref name="second"/> (MPI_Group_union).</summary>
    public static Group Union(Group first, Group second)
    {
        ArgumentNullException.ThrowIfNull(first);
        ArgumentNullException.ThrowIfNull(second);
        return new Group([.. first._members, .. second._members.Where(m => !first._members.Contains(m))]);
    }

    /// <summary>Members of both groups, in <paramref name="first"/>'s order (MPI_Group_intersection).</summary>
    public static Group Intersection(Group first, Group second)
    {
        ArgumentNullException.ThrowIfNull(first);
        ArgumentNullException.ThrowIfNull(second);
        return new Group(first._members.Where(m => second._members.Contains(m)).ToArray());
    }

    /// <summary>Members of <paramref name="first"/> not in <paramref name="second"/>, in order (MPI_Group_difference).</summary>
    public static Group Difference(Group first, Group second)
    {
        ArgumentNullException.ThrowIfNull(first);
        ArgumentNullException.ThrowIfNull(second);
        return new Group(first._members.Where(m => !second._members.Contains(m)).ToArray());
    }

    /// <summary>The union (MPI.NET's operator form).</summary>
    public static Group operator |(Group first, Group second) => Union(first, second);

    /// <summary>The intersection (MPI.NET's operator form).</summary>
    public static Group operator &(Group first, Group second) => Intersection(first, second);

    /// <summary>The difference (MPI.NET's operator form).</summary>
    public static Group operator -(Group first, Group second) => Difference(first, second);

    /// <summary>For each rank in this group, its rank in <paramref name="other"/> or <see cref="NoProcess"/> (MPI_Group_translate_ranks).</summary>
    public int[] TranslateRanks(int[] ranks, Group other)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        ArgumentNullException.ThrowIfNull(other);
        return ranks.Select(r => Array.IndexOf(other._members, _members[CheckRank(r, nameof(ranks))])).ToArray();
    }

    /// <summary>Compares membership and order (MPI_Group_compare).</summary>
    public Comparison Compare(Group other)
    {
        ArgumentNullException.ThrowIfNull(other);
        if (_members.AsSpan().SequenceEqual(other._members)) return Comparison.Identical;
        if (_members.Length == other._members.Length && _members.Order().SequenceEqual(other._members.Order())) return Comparison.Similar;
        return Comparison.Unequal;
    }

    private int CheckRank(int rank, string argument)
    {
        if ((uint)rank >= (uint)_members.Length)
            throw new MpiException(ErrorClass.InvalidRank, $"Rank {rank} (argument '{argument}') is not in this group of {_members.Length} ranks.");
        return rank;
    }
}
