namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Communicators ----

    /// <summary>No communicator: what MPI_Comm_split gives a rank passing MPI_UNDEFINED, and what MPI_Comm_free leaves.</summary>
    public static readonly Intracommunicator? MPI_COMM_NULL;

    /// <summary>MPI_Comm_compare: the same communicator.</summary>
    public const int MPI_IDENT = (int)Comparison.Identical;

    /// <summary>MPI_Comm_compare: the same ranks in the same order, in another context (a duplicate).</summary>
    public const int MPI_CONGRUENT = (int)Comparison.Congruent;

    /// <summary>MPI_Comm_compare: the same ranks in another order.</summary>
    public const int MPI_SIMILAR = (int)Comparison.Similar;

    /// <summary>MPI_Comm_compare: different ranks.</summary>
    public const int MPI_UNEQUAL = (int)Comparison.Unequal;

    /// <summary>A communicator of the same ranks whose messages never match <paramref name="comm"/>'s, as a library takes to keep its traffic apart.</summary>
    public static int MPI_Comm_dup(Intracommunicator comm, out Intracommunicator newcomm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        newcomm = comm.Dup();
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Partitions <paramref name="comm"/>'s ranks by <paramref name="color"/>, each part ranked by <paramref name="key"/>
    /// then by old rank; a rank passing MPI_UNDEFINED gets MPI_COMM_NULL.
    /// </summary>
    public static int MPI_Comm_split(Intracommunicator comm, int color, int key, out Intracommunicator? newcomm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        if (color < 0 && color != MPI_UNDEFINED)
            throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Comm_split: color {color} is invalid; colors are non-negative, or MPI_UNDEFINED.");
        newcomm = comm.Split(color, key);
        return MPI_SUCCESS;
    }

    /// <summary>Frees <paramref name="comm"/> and sets it to MPI_COMM_NULL; MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed.</summary>
    public static int MPI_Comm_free<TComm>(ref TComm? comm) where TComm : Communicator
    {
        ArgumentNullException.ThrowIfNull(comm);
        if (ReferenceEquals(comm, Communicator.World) || ReferenceEquals(comm, Communicator.Self))
            throw new MpiException(ErrorClass.InvalidCommunicator, $"MPI_Comm_free: {(ReferenceEquals(comm, Communicator.World) ? nameof(MPI_COMM_WORLD) : nameof(MPI_COMM_SELF))} cannot be freed.");
        comm.Dispose();
        comm = null;
        return MPI_SUCCESS;
    }

    /// <summary>How <paramref name="comm1"/> and <paramref name="comm2"/> relate: MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL.</summary>
    public static int MPI_Comm_compare(Communicator comm1, Communicator comm2, out int result)
    {
        ArgumentNullException.ThrowIfNull(comm1);
        ArgumentNullException.ThrowIfNull(comm2);
        result = (int)comm1.Compare(comm2);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// A communicator of <paramref name="group"/>'s ranks, a subset of <paramref name="comm"/>'s, ranked in the
    /// group's order (collective over <paramref name="comm"/>); ranks outside the group get MPI_COMM_NULL.
    /// </summary>
    public static int MPI_Comm_create(Intracommunicator comm, Group group, out Intracommunicator? newcomm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        newcomm = comm.Create(group);
        return MPI_SUCCESS;
    }

    // ---- Groups: ordered sets of ranks, for MPI_Comm_create ----

    /// <summary>No group: what MPI_Group_free leaves.</summary>
    public static readonly Group? MPI_GROUP_NULL;

    /// <summary>The group with no ranks.</summary>
    public static Group MPI_GROUP_EMPTY => Group.Empty;

    /// <summary>The ranks of <paramref name="comm"/>, in its order.</summary>
    public static int MPI_Comm_group(Communicator comm, out Group group)
    {
        ArgumentNullException.ThrowIfNull(comm);
        group = comm.Group;
        return MPI_SUCCESS;
    }

    /// <summary>The number of ranks in <paramref name="group"/>.</summary>
    public static int MPI_Group_size(Group group, out int size)
    {
        ArgumentNullException.ThrowIfNull(group);
        size = group.Size;
        return MPI_SUCCESS;
    }

    /// <summary>The calling rank's rank in <paramref name="group"/>; MPI_UNDEFINED when it is not a member.</summary>
    public static int MPI_Group_rank(Group group, out int rank)
    {
        ArgumentNullException.ThrowIfNull(group);
        rank = group.Rank == Group.NoProcess ? MPI_UNDEFINED : group.Rank;
        return MPI_SUCCESS;
    }

    /// <summary>The group of the first <paramref name="n"/> <paramref name="ranks"/> of <paramref name="group"/>, in that order.</summary>
    public static int MPI_Group_incl(Group group, int n, int[] ranks, out Group newgroup)
    {
        ArgumentNullException.ThrowIfNull(group);
        newgroup = group.IncludeOnly(Ranks(n, ranks, nameof(MPI_Group_incl)));
        return MPI_SUCCESS;
    }

    /// <summary><paramref name="group"/> without the first <paramref name="n"/> <paramref name="ranks"/>, the others in their order.</summary>
    public static int MPI_Group_excl(Group group, int n, int[] ranks, out Group newgroup)
    {
        ArgumentNullException.ThrowIfNull(group);
        newgroup = group.Exclude(Ranks(n, ranks, nameof(MPI_Group_excl)));
        return MPI_SUCCESS;
    }

    /// <summary>Frees <paramref name="group"/> and sets it to MPI_GROUP_NULL; communicators made from it are unaffected.</summary>
    public static int MPI_Group_free(ref Group? group)
    {
        ArgumentNullException.ThrowIfNull(group);
        group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }

    private static int[] Ranks(int n, int[] ranks, string call)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        if (n < 0 || n > ranks.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: n is {n}; the array holds {ranks.Length} ranks.");
        return ranks[..n];
    }
}
