namespace Pmpi.Matching;

/// <summary>The algorithms and steps of the collectives, each of which tags its messages with its own number.</summary>
internal enum CollectiveStep
{
    Barrier = 1,
    Broadcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    Scan,
    AllreduceByBlocks,
    BroadcastByBlocks,
    NeighborAllgather,
    NeighborAlltoall,
    IntercommunicatorBarrier = 21,
    IntercommunicatorBroadcast,
    IntercommunicatorGather,
    IntercommunicatorReduce,
    IntercommunicatorScatter,
    IntercommunicatorAllgather,
    IntercommunicatorAllreduce,
    IntercommunicatorAlltoall,
    IntercommunicatorAgreement,
    IntercommunicatorGatherFlattened,
    IntercommunicatorScatterFlattened,
    IntercommunicatorAllgatherFlattened,
    IntercommunicatorAlltoallFlattened,
    IntercommunicatorReduceScatter,
}

/// <summary>
/// The tag of a collective's messages, in the communicator's collective context: the algorithm's step, the reduction
/// operation and the root. What an algorithm's choice depends on thus travels with each of its messages, so ranks
/// that disagree (one passed Operation.Add and another its own operation; two named different roots; a count put one
/// rank's allreduce by blocks and another's by whole arrays) meet a message whose tag is not the one they await, and
/// <see cref="MatchingEngine"/> fails the receive naming both (<see cref="Disagreement"/>) instead of waiting forever.
/// </summary>
internal static class CollectiveTag
{
    private const int StepBits = 6, OperationBits = 4, RootBits = 21; // 31 bits: a tag is never negative (AnyTag)

    /// <summary>The operation field of a collective that reduces nothing.</summary>
    public const int NoOperation = 0;

    /// <summary>The operation field of a user's operation; the predefined ones are their <see cref="PredefinedOperation"/>.</summary>
    public const int UserOperation = 15;

    /// <summary>The tag of <paramref name="step"/> with <paramref name="operation"/> and <paramref name="root"/> (0 where none).</summary>
    public static int Of(CollectiveStep step, int operation = NoOperation, int root = 0) =>
        (int)step | operation << StepBits | (root & ((1 << RootBits) - 1)) << (StepBits + OperationBits);

    /// <summary>Whether <paramref name="context"/> carries collectives: a communicator's context is even, its collectives' the odd one after.</summary>
    public static bool IsCollective(int context) => (context & 1) != 0;

    /// <summary>The error of a rank whose receive for <paramref name="awaited"/> met <paramref name="sent"/> from the same peer instead.</summary>
    public static CollectiveMismatch Disagreement(Envelope awaited, int sent) => new(awaited, sent);

    /// <summary>The step, operation and root a tag names, in words.</summary>
    public static string Describe(int tag)
    {
        var step = (CollectiveStep)(tag & ((1 << StepBits) - 1));
        int operation = tag >> StepBits & ((1 << OperationBits) - 1), root = tag >> (StepBits + OperationBits);
        string name = Enum.IsDefined(step) ? step switch
        {
            CollectiveStep.AllreduceByBlocks => "Allreduce by blocks",
            CollectiveStep.BroadcastByBlocks => "Broadcast by blocks",
            CollectiveStep.Allreduce => "Allreduce by whole values",
            _ => step.ToString(),
        } : $"collective step {(int)step}";
        string what = operation switch
        {
            NoOperation => "",
            UserOperation => " of a user-defined operation",
            _ => $" of the predefined {(PredefinedOperation)operation}",
        };
        bool rooted = step is CollectiveStep.Broadcast or CollectiveStep.BroadcastByBlocks or CollectiveStep.Reduce or CollectiveStep.Gather or CollectiveStep.Scatter;
        return rooted ? $"{name}{what} from root {root}" : name + what;
    }
}

/// <summary>
/// A collective's receive that met another tag from its source (<see cref="CollectiveTag"/>). The matching engine
/// knows ranks only as its communicator's; <see cref="Naming"/> restates the error with world ranks too.
/// </summary>
internal sealed class CollectiveMismatch(Envelope awaited, int sent)
    : MpiException(ErrorClass.CollectiveMismatch, Text(awaited, sent, $"rank {awaited.Source}", "this rank"))
{
    /// <summary>The same error, naming this rank and the sender in <paramref name="members"/>' communicator, and their world ranks where those differ.</summary>
    public MpiException Naming(int rank, ReadOnlySpan<int> members) =>
        new(ErrorClass.CollectiveMismatch, Text(awaited, sent, Name(awaited.Source, members), $"{Name(rank, members)}, this rank,"));

    private static string Name(int rank, ReadOnlySpan<int> members) =>
        members[rank] == rank ? $"rank {rank}" : $"rank {rank} (world rank {members[rank]})";

    private static string Text(Envelope awaited, int sent, string sender, string receiver) =>
        $"Ranks disagree in a collective: {sender} sent {CollectiveTag.Describe(sent)} where {receiver} awaits {CollectiveTag.Describe(awaited.Tag)}. "
        + "Every rank must call the same collectives in the same order, with the same root, operation, count and type.";
}
