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
}
