using Pmpi.Devices;

namespace Pmpi.Collectives;

/// <summary>
/// Collectives between the two groups of an intercommunicator: each group does its part with the intracommunicator
/// collectives on its own communicator (<c>local</c>), and the groups' rank-0 leaders (or the root) cross over on the
/// intercommunicator's collective context, so a group's cost is its own collective's plus one message.
/// </summary>
internal static class IntercommunicatorCollectives
{
    // Tags of their own, so a mismatched collective shows as an error rather than a silent swap.
    private const int BarrierTag = 21, BroadcastTag = 22, GatherTag = 23, ReduceTag = 24, ScatterTag = 25,
        AllgatherTag = 26, AllreduceTag = 27, AlltoallTag = 28, AgreeTag = 29, GatherFlattenedTag = 30,
        ScatterFlattenedTag = 31, AllgatherFlattenedTag = 32, AlltoallFlattenedTag = 33, ReduceScatterTag = 34;

    /// <summary>Every local rank enters, the leaders swap a token (so both groups entered), then the local ranks leave together.</summary>
    public static void Barrier(Intercommunicator comm, Intracommunicator local)
    {
        local.Barrier();
        if (comm.Rank == 0) Exchange(comm, true, 0, BarrierTag);
        local.Barrier();
    }

    public static int[] ExchangeWithRemoteLeader(Intercommunicator comm, int[] values) => Exchange(comm, values, 0, AgreeTag);

    public static T Broadcast<T>(Intercommunicator comm, Intracommunicator local, T value, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                Send(comm, value, 0, BroadcastTag);
                return value;
            case Intercommunicator.Null:
                return value;
            default:
                if (comm.Rank == 0) value = Receive<T>(comm, root, BroadcastTag);
                local.Broadcast(ref value, 0);
                return value;
        }
    }

    public static T[]? Gather<T>(Intercommunicator comm, Intracommunicator local, T value, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                return Receive<T[]>(comm, 0, GatherTag);
            case Intercommunicator.Null:
                return null;
            default:
                var gathered = local.Gather(value, 0);
                if (comm.Rank == 0) Send(comm, gathered!, root, GatherTag);
                return null;
        }
    }

    public static T Reduce<T>(Intercommunicator comm, Intracommunicator local, T value, ReductionOperation<T> op, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                return Receive<T>(comm, 0, ReduceTag);
            case Intercommunicator.Null:
                return default!;
            default:
                var reduced = local.Reduce(value, op, 0);
                if (comm.Rank == 0) Send(comm, reduced, root, ReduceTag);
                return default!;
        }
    }

    /// <summary>The root sends the whole array to the other group's leader, which scatters it in its group.</summary>
    public static T Scatter<T>(Intercommunicator comm, Intracommunicator local, T[]? values, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                Send(comm, values!, 0, ScatterTag);
                return default!;
            case Intercommunicator.Null:
                return default!;
            default:
                var all = comm.Rank == 0 ? Receive<T[]>(comm, root, ScatterTag) : null;
                if (all is not null && all.Length != local.Size)
                    throw new MpiException(ErrorClass.InvalidCount, $"Scatter: the root sent {all.Length} elements for a group of {local.Size} ranks.");
                return local.Scatter(all, 0);
        }
    }

    public static T[] Allgather<T>(Intercommunicator comm, Intracommunicator local, T value)
    {
        var mine = local.Gather(value, 0);
        var theirs = comm.Rank == 0 ? Exchange(comm, mine!, 0, AllgatherTag) : [];
        local.Broadcast(ref theirs, 0);
        return theirs;
    }

    public static T Allreduce<T>(Intercommunicator comm, Intracommunicator local, T value, ReductionOperation<T> op)
    {
        var mine = local.Reduce(value, op, 0);
        var theirs = comm.Rank == 0 ? Exchange(comm, mine, 0, AllreduceTag) : default!;
        local.Broadcast(ref theirs, 0);
        return theirs;
    }

    /// <summary>Every send starts before any receive, so rendezvous-sized elements cannot deadlock.</summary>
    public static T[] Alltoall<T>(Intercommunicator comm, T[] values)
    {
        var sends = new SendOperation[values.Length];
        for (int dest = 0; dest < values.Length; dest++) sends[dest] = comm.StartSend(values[dest], dest, AlltoallTag, comm.CollectiveContext, synchronous: false);
        var received = new T[comm.RemoteSize];
        for (int source = 0; source < received.Length; source++) received[source] = Receive<T>(comm, source, AlltoallTag);
        foreach (var send in sends) comm.Complete(send);
        return received;
    }

    /// <summary>
    /// The other group's arrays concatenated in rank order at the root: its leader gathers them (and their lengths, so
    /// the root can check them against <paramref name="counts"/>) and sends both across.
    /// </summary>
    public static T[]? GatherFlattened<T>(Intercommunicator comm, Intracommunicator local, T[] values, int[]? counts, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                var lengths = Receive<int[]>(comm, 0, GatherFlattenedTag);
                var gathered = Receive<T[]>(comm, 0, GatherFlattenedTag);
                if (!lengths.AsSpan().SequenceEqual(counts))
                    throw new MpiException(ErrorClass.InvalidCount, $"GatherFlattened: the root expected [{string.Join(", ", counts!)}] elements from the other group's ranks; they sent [{string.Join(", ", lengths)}].");
                return gathered;
            case Intercommunicator.Null:
                return null;
            default:
                var (flattened, sizes) = GatherAtLeader(local, values);
                if (comm.Rank == 0)
                {
                    Send(comm, sizes!, root, GatherFlattenedTag);
                    Send(comm, flattened!, root, GatherFlattenedTag);
                }
                return null;
        }
    }

    /// <summary>The root sends the flattened array to the other group's leader, which scatters its blocks in its group.</summary>
    public static T[] ScatterFromFlattened<T>(Intercommunicator comm, Intracommunicator local, T[]? values, int[] counts, int root)
    {
        switch (root)
        {
            case Intercommunicator.Root:
                Send(comm, values!, 0, ScatterFlattenedTag);
                return [];
            case Intercommunicator.Null:
                return [];
            default:
                var all = comm.Rank == 0 ? Receive<T[]>(comm, root, ScatterFlattenedTag) : null;
                if (all is not null && all.Length != counts.Sum())
                    throw new MpiException(ErrorClass.InvalidCount, $"ScatterFromFlattened: the root sent {all.Length} elements; the counts here, [{string.Join(", ", counts)}], add up to {counts.Sum()}.");
                return CollectiveAlgorithms.Scatterv(local, all, 0, counts);
        }
    }

    /// <summary>Each leader gathers its group's arrays, the leaders swap them, and each leader broadcasts the other group's.</summary>
    public static T[] AllgatherFlattened<T>(Intercommunicator comm, Intracommunicator local, T[] values, int[] counts)
    {
        var (mine, _) = GatherAtLeader(local, values);
        var theirs = comm.Rank == 0 ? Exchange(comm, mine!, 0, AllgatherFlattenedTag) : [];
        local.Broadcast(ref theirs, 0);
        if (theirs.Length != counts.Sum())
            throw new MpiException(ErrorClass.InvalidCount, $"AllgatherFlattened: the other group sent {theirs.Length} elements; the counts, [{string.Join(", ", counts)}], add up to {counts.Sum()}.");
        return theirs;
    }

    /// <summary>Blocks to every rank of the other group; every send starts before any receive, as in <see cref="Alltoall"/>.</summary>
    public static T[] AlltoallFlattened<T>(Intercommunicator comm, T[] values, int[] sendCounts, int[] receiveCounts)
    {
        var sends = new SendOperation[sendCounts.Length];
        for (int dest = 0, offset = 0; dest < sendCounts.Length; offset += sendCounts[dest++])
            sends[dest] = comm.StartSend(values[offset..(offset + sendCounts[dest])], dest, AlltoallFlattenedTag, comm.CollectiveContext, synchronous: false);
        var received = new T[receiveCounts.Sum()];
        for (int source = 0, offset = 0; source < receiveCounts.Length; offset += receiveCounts[source++])
        {
            var block = Receive<T[]>(comm, source, AlltoallFlattenedTag);
            if (block.Length != receiveCounts[source])
                throw new MpiException(ErrorClass.InvalidCount, $"AlltoallFlattened: rank {source} of the other group sent {block.Length} elements; receiveCounts[{source}] is {receiveCounts[source]}.");
            block.CopyTo(received, offset);
        }
        foreach (var send in sends) comm.Complete(send);
        return received;
    }

    /// <summary>
    /// Each group reduces its arrays at its leader, the leaders swap the results, and each leader scatters the other
    /// group's result over its own group in blocks of <paramref name="counts"/> (MPI_Reduce_scatter, MPI-2 §7.3.3).
    /// </summary>
    public static T[] ReduceScatter<T>(Intercommunicator comm, Intracommunicator local, T[] values, ReductionOperation<T[]> op, int[] counts)
    {
        var mine = local.Reduce(values, op, 0);
        var theirs = comm.Rank == 0 ? Exchange(comm, mine, 0, ReduceScatterTag) : null;
        if (theirs is not null && theirs.Length != counts.Sum())
            throw new MpiException(ErrorClass.InvalidCount, $"ReduceScatter: the other group reduced arrays of {theirs.Length} elements; the counts here, [{string.Join(", ", counts)}], add up to {counts.Sum()}.");
        return CollectiveAlgorithms.Scatterv(local, theirs, 0, counts);
    }

    // The group's arrays concatenated in rank order, and their lengths, at the group's leader; nulls elsewhere.
    private static (T[]? Flattened, int[]? Lengths) GatherAtLeader<T>(Intracommunicator local, T[] values)
    {
        var lengths = local.Gather(values.Length, 0);
        return (CollectiveAlgorithms.Gatherv(local, values, 0, rank => lengths![rank]), lengths);
    }

    private static void Send<T>(Intercommunicator comm, T value, int dest, int tag) =>
        comm.Complete(comm.StartSend(value, dest, tag, comm.CollectiveContext, synchronous: false));

    private static T Receive<T>(Intercommunicator comm, int source, int tag) =>
        comm.Decode<T>(comm.ReceiveMessage(source, tag, comm.CollectiveContext), comm.CollectiveContext);

    private static T Exchange<T>(Intercommunicator comm, T value, int partner, int tag)
    {
        var send = comm.StartSend(value, partner, tag, comm.CollectiveContext, synchronous: false);
        var received = Receive<T>(comm, partner, tag);
        comm.Complete(send);
        return received;
    }
}
