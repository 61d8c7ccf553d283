using Pmpi.Collectives;

namespace Pmpi;

// The MPI-3 nonblocking collectives and the MPI-4 persistent ones. Each runs the blocking collective of the same name
// on the communicator's worker, in the order the program started them (CollectiveSequence), so it progresses while
// the program computes and its result is what the blocking call returns. Arguments are checked at the call; arrays
// passed in are read while the collective runs, so the program must not change them before it completes (as MPI).
public partial class Intracommunicator
{
    // ---- Nonblocking (MPI_I*) ----

    /// <summary>Starts a barrier (MPI_Ibarrier): completes once every member has started it.</summary>
    public CollectiveRequest<bool> ImmediateBarrier() => Sequence.Start(() =>
    {
        Barrier();
        return true;
    });

    /// <summary>Starts a broadcast of the root's value (MPI_Ibcast); the request's value is the root's.</summary>
    public CollectiveRequest<T> ImmediateBroadcast<T>(T value, int root)
    {
        Checked(root);
        return Sequence.Start(() =>
        {
            Broadcast(ref value, root);
            return value;
        });
    }

    /// <summary>Starts a broadcast of an array (MPI_Ibcast on a buffer): a non-root array of the root's length is filled in place; the request's value is the array received.</summary>
    public CollectiveRequest<T[]> ImmediateBroadcast<T>(T[] values, int root)
    {
        Checked(root);
        return Sequence.Start(() =>
        {
            Broadcast(ref values, root);
            return values;
        });
    }

    /// <summary>Starts a reduction to <paramref name="root"/> (MPI_Ireduce); the value is default on other ranks.</summary>
    public CollectiveRequest<T> ImmediateReduce<T>(T value, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(op);
        Checked(root);
        return Sequence.Start(() => Reduce(value, op, root));
    }

    /// <summary>Starts an element-wise reduction of arrays to <paramref name="root"/> (MPI_Ireduce on a buffer); null on other ranks.</summary>
    public CollectiveRequest<T[]?> ImmediateReduce<T>(T[] values, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        Checked(root);
        return Sequence.Start(() => Reduce(values, op, root));
    }

    /// <summary>Starts an allreduce (MPI_Iallreduce).</summary>
    public CollectiveRequest<T> ImmediateAllreduce<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return Sequence.Start(() => Allreduce(value, op));
    }

    /// <summary>Starts an element-wise allreduce of arrays (MPI_Iallreduce on a buffer), by blocks when long, as <see cref="Allreduce{T}(T[], ReductionOperation{T})"/>.</summary>
    public CollectiveRequest<T[]> ImmediateAllreduce<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        return Sequence.Start(() => Allreduce(values, op));
    }

    /// <summary>
    /// Starts an element-wise allreduce of arrays into <paramref name="result"/>, an array of <paramref name="values"/>'
    /// length or <paramref name="values"/> itself (MPI_Iallreduce with a receive buffer): the request's value is
    /// <paramref name="result"/>, and no array is allocated for it.
    /// </summary>
    public CollectiveRequest<T[]> ImmediateAllreduce<T>(T[] values, ReductionOperation<T> op, T[] result)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        CheckLength(result, values.Length, nameof(result));
        return Sequence.Start(() =>
        {
            var filled = result;
            Allreduce(values, op, ref filled);
            return filled;
        });
    }

    /// <summary>Starts a gather to <paramref name="root"/> (MPI_Igather); null on other ranks.</summary>
    public CollectiveRequest<T[]?> ImmediateGather<T>(T value, int root)
    {
        Checked(root);
        return Sequence.Start(() => Gather(value, root));
    }

    /// <summary>Starts a gather of arrays of <paramref name="counts"/>[rank] elements (MPI_Igatherv); null on other ranks.</summary>
    public CollectiveRequest<T[]?> ImmediateGatherFlattened<T>(T[] values, int[] counts, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(counts);
        Checked(root);
        return Sequence.Start(() => GatherFlattened(values, counts, root));
    }

    /// <summary>Starts a scatter of the root's array, an element to each rank (MPI_Iscatter).</summary>
    public CollectiveRequest<T> ImmediateScatter<T>(T[]? values, int root)
    {
        Checked(root);
        return Sequence.Start(() => Scatter(values, root));
    }

    /// <summary>Starts a scatter of blocks of <paramref name="counts"/>[rank] elements of the root's array (MPI_Iscatterv).</summary>
    public CollectiveRequest<T[]> ImmediateScatterFromFlattened<T>(T[]? values, int[] counts, int root)
    {
        ArgumentNullException.ThrowIfNull(counts);
        Checked(root);
        return Sequence.Start(() => ScatterFromFlattened(values, counts, root));
    }

    /// <summary>Starts an allgather (MPI_Iallgather).</summary>
    public CollectiveRequest<T[]> ImmediateAllgather<T>(T value) => Sequence.Start(() => Allgather(value));

    /// <summary>Starts an allgather of arrays of <paramref name="counts"/>[rank] elements (MPI_Iallgatherv).</summary>
    public CollectiveRequest<T[]> ImmediateAllgatherFlattened<T>(T[] values, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(counts);
        return Sequence.Start(() => AllgatherFlattened(values, counts));
    }

    /// <summary>Starts an all-to-all exchange, element j to rank j (MPI_Ialltoall).</summary>
    public CollectiveRequest<T[]> ImmediateAlltoall<T>(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        return Sequence.Start(() => Alltoall(values));
    }

    /// <summary>Starts an all-to-all exchange of blocks of the given counts (MPI_Ialltoallv).</summary>
    public CollectiveRequest<T[]> ImmediateAlltoallFlattened<T>(T[] values, int[] sendCounts, int[] receiveCounts)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(sendCounts);
        ArgumentNullException.ThrowIfNull(receiveCounts);
        return Sequence.Start(() => AlltoallFlattened(values, sendCounts, receiveCounts));
    }

    /// <summary>Starts an inclusive scan (MPI_Iscan).</summary>
    public CollectiveRequest<T> ImmediateScan<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return Sequence.Start(() => Scan(value, op));
    }

    /// <summary>Starts an exclusive scan (MPI_Iexscan); default on rank 0.</summary>
    public CollectiveRequest<T> ImmediateExclusiveScan<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return Sequence.Start(() => ExclusiveScan(value, op));
    }

    // ---- Persistent (MPI-4 MPI_*_init): bound to their arrays once, started any number of times ----

    /// <summary>A barrier to start again and again (MPI_Barrier_init).</summary>
    public PersistentRequest<bool> PersistentBarrier() => new(ImmediateBarrier);

    /// <summary>
    /// A broadcast of <paramref name="values"/> to start again and again (MPI_Bcast_init): each start sends the root's
    /// array as it is then and fills the others' arrays (which must have the root's length).
    /// </summary>
    public PersistentRequest<T[]> PersistentBroadcast<T>(T[] values, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        Checked(root);
        return new(() => Sequence.Start(() =>
        {
            var received = values;
            Broadcast(ref received, root);
            if (!ReferenceEquals(received, values))
                throw new MpiException(ErrorClass.InvalidCount, $"A persistent broadcast fills rank {Rank}'s array of {values.Length} elements; root {root}'s holds {received.Length}.");
            return values;
        }));
    }

    /// <summary>An element-wise reduction of <paramref name="values"/> to <paramref name="root"/> (MPI_Reduce_init); each round's result at the root fills the same array.</summary>
    public PersistentRequest<T[]?> PersistentReduce<T>(T[] values, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        Checked(root);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            Reduce(values, op, root, ref result);
            return Rank == root ? result : null;
        }));
    }

    /// <summary>An element-wise allreduce of <paramref name="values"/> (MPI_Allreduce_init); each round's result fills the same array.</summary>
    public PersistentRequest<T[]> PersistentAllreduce<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            Allreduce(values, op, ref result);
            return result;
        }));
    }

    /// <summary>A gather of <paramref name="values"/>, of one length on every rank, to <paramref name="root"/> (MPI_Gather_init); null on other ranks.</summary>
    public PersistentRequest<T[]?> PersistentGather<T>(T[] values, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        Checked(root);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            GatherFlattened(values, root, ref result);
            return Rank == root ? result : null;
        }));
    }

    /// <summary>A scatter of blocks of <paramref name="count"/> elements of the root's <paramref name="values"/> (MPI_Scatter_init).</summary>
    public PersistentRequest<T[]> PersistentScatter<T>(T[]? values, int count, int root)
    {
        Checked(root);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            ScatterFromFlattened(values, count, root, ref result);
            return result;
        }));
    }

    /// <summary>An allgather of <paramref name="values"/>, of one length on every rank (MPI_Allgather_init).</summary>
    public PersistentRequest<T[]> PersistentAllgather<T>(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            AllgatherFlattened(values, values.Length, ref result);
            return result;
        }));
    }

    /// <summary>An all-to-all exchange of blocks of <paramref name="count"/> elements (MPI_Alltoall_init).</summary>
    public PersistentRequest<T[]> PersistentAlltoall<T>(T[] values, int count)
    {
        ArgumentNullException.ThrowIfNull(values);
        T[] result = null!;
        return new(() => Sequence.Start(() =>
        {
            AlltoallFlattened(values, count, ref result);
            return result;
        }));
    }
}
