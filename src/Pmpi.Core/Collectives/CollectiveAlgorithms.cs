using System.Buffers;
using System.Runtime.CompilerServices;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Collectives;

/// <summary>
/// The collective algorithms, written on point-to-point in the communicator's collective context. Reductions combine
/// in rank order, op(lower, higher), so non-commutative operations are exact (MPI-4.1 §6.9.1). Costs in rounds for
/// n ranks: barrier, broadcast, gather, scatter, reduce, allreduce and scan ⌈log2 n⌉; allgather and alltoall n - 1.
/// </summary>
internal static class CollectiveAlgorithms
{
    // Each algorithm tags its messages with its step, operation and root (CollectiveTag), so ranks that chose
    // differently fail with both choices named instead of waiting for each other.
    private static readonly int BarrierTag = CollectiveTag.Of(CollectiveStep.Barrier), AllgatherTag = CollectiveTag.Of(CollectiveStep.Allgather),
        AlltoallTag = CollectiveTag.Of(CollectiveStep.Alltoall);

    /// <summary>Dissemination barrier: in round k each rank signals rank + 2^k and waits for rank - 2^k.</summary>
    public static void Barrier(Intracommunicator comm)
    {
        for (int distance = 1; distance < comm.Size; distance <<= 1)
            Exchange(comm, true, (comm.Rank + distance) % comm.Size, (comm.Rank - distance + comm.Size) % comm.Size, BarrierTag);
    }

    /// <summary>Binomial tree rooted at <paramref name="root"/>, on ranks relative to it.</summary>
    public static T Broadcast<T>(Intracommunicator comm, T value, int root)
    {
        int size = comm.Size, relative = Relative(comm.Rank, root, size), reach = Reach(relative, size);
        if (relative != 0) value = Receive<T>(comm, Absolute(relative - reach, root, size), CollectiveTag.Of(CollectiveStep.Broadcast, root: root));
        SendDown(comm, value, relative, reach, root);
        return value;
    }

    /// <summary>
    /// <see cref="Broadcast"/> of an array that a non-root's <paramref name="values"/> takes in place when it has the
    /// root's length (<see cref="Communicator.DecodeArray"/>), so broadcasts into the callers' own arrays allocate
    /// nothing. The root chooses the algorithm, as only it knows the length: a large array of a raw type over ranks on
    /// several nodes goes by blocks (<see cref="BroadcastByBlocks"/>), announced by the tag of the first message each
    /// rank gets from its parent; anything else by the binomial tree.
    /// </summary>
    public static T[] BroadcastInto<T>(Intracommunicator comm, T[] values, int root)
    {
        int size = comm.Size, relative = Relative(comm.Rank, root, size), reach = Reach(relative, size);
        if (relative == 0)
        {
            if (GoesByBlocks(comm, values))
            {
                BroadcastByBlocks(comm, values, relative, reach, root);
                return values;
            }
        }
        else
        {
            // A rank without an array gets a new one, which a large array is read straight into.
            int parent = Absolute(relative - reach, root, size);
            var message = comm.ReceiveMessage(parent, Communicator.AnyTag, comm.CollectiveContext, returnsNewArray: values is null, into: ReceiveTarget.Of(values));
            int tag = message.Envelope.Tag;
            if (tag == CollectiveTag.Of(CollectiveStep.BroadcastByBlocks, root: root))
            {
                int length = comm.Decode<int>(message, comm.CollectiveContext);
                if (values is null || values.Length != length) values = GC.AllocateUninitializedArray<T>(length);
                BroadcastByBlocks(comm, values, relative, reach, root);
                return values;
            }
            if (tag != CollectiveTag.Of(CollectiveStep.Broadcast, root: root))
            {
                message.Release();
                throw CollectiveTag.Disagreement(new Envelope(comm.CollectiveContext, parent, CollectiveTag.Of(CollectiveStep.Broadcast, root: root)), tag)
                    .Naming(comm.Rank, comm.Members);
            }
            values = comm.DecodeArray(message, comm.CollectiveContext, values);
        }
        SendDown(comm, values, relative, reach, root);
        return values;
    }

    /// <summary>Whether the root broadcasts <paramref name="values"/> by blocks: the communicator decided from how many bytes when it was made.</summary>
    private static bool GoesByBlocks<T>(Intracommunicator comm, T[]? values) =>
        values is not null && values.Length >= comm.Size && (long)values.Length * Unsafe.SizeOf<T>() >= comm.Collectives.BroadcastByBlocksFrom
        && Codec<T[]>.Instance is RawArrayCodec<T>;

    /// <summary>
    /// Van de Geijn's broadcast (MPICH's for long messages) of an array of a raw type: cut into one block per rank
    /// (relative to the root), the blocks are scattered down the binomial tree, each rank receiving its subtree's,
    /// then passed round a ring until every rank has all. A rank skips in the ring the blocks its right neighbour got
    /// in the scatter, so about the array crosses each link once and the root sends it once, not once per child;
    /// the same bytes as the binomial tree in all, spread over every link. Before its subtree's blocks, each child is
    /// sent the array's length (tagged, so it knows this algorithm was chosen).
    /// </summary>
    private static void BroadcastByBlocks<T>(Intracommunicator comm, T[] values, int relative, int reach, int root)
    {
        int size = comm.Size, tag = CollectiveTag.Of(CollectiveStep.BroadcastByBlocks, root: root);
        int Start(int block) => (int)((long)values.Length * block / size);
        // The blocks rank relative gets in the scatter: its subtree's, [relative, relative + its reach).
        bool Owns(int rank, int block) => block >= rank && block < rank + Reach(rank, size);
        int subtreeFrom = Start(relative), subtreeLength = Start(Math.Min(relative + reach, size)) - subtreeFrom;
        var theirs = ArrayPool<T>.Shared.Rent(relative == 0 ? values.Length / size + 1 : Math.Max(subtreeLength, values.Length / size + 1));
        try
        {
            if (relative != 0)
            {
                CheckCount(ReceiveInto(comm, Absolute(relative - reach, root, size), tag, theirs), subtreeLength, values.Length);
                theirs.AsSpan(0, subtreeLength).CopyTo(values.AsSpan(subtreeFrom));
            }
            for (int mask = reach >> 1; mask > 0; mask >>= 1)
            {
                int child = relative + mask;
                if (child >= size) continue;
                int dest = Absolute(child, root, size), end = Math.Min(child + mask, size);
                Send(comm, values.Length, dest, tag);
                comm.Complete(comm.StartSend(values, Start(child), Start(end) - Start(child), dest, tag, comm.CollectiveContext));
            }

            int right = (relative + 1) % size, left = (relative - 1 + size) % size;
            for (int step = 0; step < size - 1; step++)
            {
                int sending = (relative - step + size) % size, receiving = (sending - 1 + size) % size;
                var receive = Owns(relative, receiving) ? null
                    : comm.PostReceive(Absolute(left, root, size), tag, comm.CollectiveContext, into: ReceiveTarget.Of(theirs));
                var send = Owns(right, sending) ? null
                    : comm.StartSend(values, Start(sending), Start(sending + 1) - Start(sending), Absolute(right, root, size), tag, comm.CollectiveContext);
                if (receive is not null)
                {
                    int count = Start(receiving + 1) - Start(receiving);
                    CheckCount(comm.DecodeInto(comm.Complete(receive), comm.CollectiveContext, ref theirs), count, values.Length);
                    theirs.AsSpan(0, count).CopyTo(values.AsSpan(Start(receiving)));
                }
                if (send is not null) comm.Complete(send);
            }
        }
        finally
        {
            ArrayPool<T>.Shared.Return(theirs);
        }
    }

    /// <summary>Sends <paramref name="value"/> to this rank's children in the binomial tree, the farthest first.</summary>
    private static void SendDown<T>(Intracommunicator comm, T value, int relative, int reach, int root)
    {
        int size = comm.Size;
        for (int mask = reach >> 1; mask > 0; mask >>= 1)
            if (relative + mask < size) Send(comm, value, Absolute(relative + mask, root, size), CollectiveTag.Of(CollectiveStep.Broadcast, root: root));
    }

    /// <summary>
    /// How many ranks, from itself on, the subtree a rank heads in the binomial tree spans (relative to the root): the
    /// lowest set bit of its relative rank, whose parent is that far below it; the root's, the power of two that covers
    /// every rank.
    /// </summary>
    private static int Reach(int relative, int size)
    {
        if (relative != 0) return relative & -relative;
        int reach = 1;
        while (reach < size) reach <<= 1;
        return reach;
    }

    /// <summary>
    /// Binomial tree towards rank 0, where rank r has combined ranks [r, r + 2^k) after round k, so the order is
    /// kept for any operation; then rank 0 hands the result to a different root.
    /// </summary>
    public static T Reduce<T>(Intracommunicator comm, T value, ReductionOperation<T> op, int root)
    {
        int rank = comm.Rank, size = comm.Size, tag = CollectiveTag.Of(CollectiveStep.Reduce, OperationCode.Of(op), root);
        for (int mask = 1; mask < size; mask <<= 1)
        {
            if ((rank & mask) != 0)
            {
                Send(comm, value, rank - mask, tag);
                break;
            }
            if (rank + mask < size) value = op(value, Receive<T>(comm, rank + mask, tag));
        }
        if (root != 0)
        {
            if (rank == 0) Send(comm, value, root, tag);
            else if (rank == root) value = Receive<T>(comm, 0, tag);
        }
        return rank == root ? value : default!;
    }

    /// <summary>
    /// Recursive doubling (MPICH's algorithm): the first 2r ranks, r = n - 2^⌊log2 n⌋, fold pairwise so a power of
    /// two remain; those exchange with partners 2^k apart; the folded ranks get the result back.
    /// </summary>
    public static T Allreduce<T>(Intracommunicator comm, T value, ReductionOperation<T> op)
    {
        int rank = comm.Rank, tag = CollectiveTag.Of(CollectiveStep.Allreduce, OperationCode.Of(op));
        var (powerOfTwo, remainder) = Fold(comm.Size);

        int folded;
        if (rank < 2 * remainder)
        {
            if (rank % 2 == 0)
            {
                Send(comm, value, rank + 1, tag);
                folded = -1;
            }
            else
            {
                value = op(Receive<T>(comm, rank - 1, tag), value);
                folded = rank / 2;
            }
        }
        else folded = rank - remainder;

        if (folded >= 0)
        {
            for (int mask = 1; mask < powerOfTwo; mask <<= 1)
            {
                int partnerFolded = folded ^ mask;
                int partner = partnerFolded < remainder ? partnerFolded * 2 + 1 : partnerFolded + remainder;
                var other = Exchange(comm, value, partner, partner, tag);
                value = partner < rank ? op(other, value) : op(value, other);
            }
        }

        if (rank < 2 * remainder)
        {
            if (rank % 2 == 1) Send(comm, value, rank - 1, tag);
            else value = Receive<T>(comm, rank + 1, tag);
        }
        return value;
    }

    /// <summary>Element-wise allreduce of arrays into a new array (<see cref="AllreduceInto"/>).</summary>
    public static T[] AllreduceElementwise<T>(Intracommunicator comm, T[] values, ReductionOperation<T> op)
    {
        var result = GC.AllocateUninitializedArray<T>(values.Length);
        AllreduceInto(comm, values, result, op);
        return result;
    }

    /// <summary>
    /// Element-wise allreduce of this rank's <paramref name="values"/> into <paramref name="result"/>, an array of
    /// the same length (or <paramref name="values"/> itself, in place). By blocks (<see cref="AllreduceByBlocks"/>)
    /// when the elements are of a raw type and the array is at least <see cref="CollectiveSelection.AllreduceByBlocksFrom"/>
    /// bytes (<see cref="CollectiveOptions.BlockAllreduceFrom"/> from <see cref="CollectiveSelection.BlockAllreduceRanks"/>
    /// ranks, decided when the communicator was made); otherwise whole arrays by recursive doubling
    /// (<see cref="AllreduceByDoubling"/>) on a copy of <paramref name="values"/>. Either allocates nothing and
    /// touches no fresh memory (whose page faults, on a VM, cost more than the bytes' copies). Both keep rank order,
    /// so the choice does not depend on the operation: ranks that name one operation differently (F#'s (+), C#'s
    /// Operation.Add) or that pass different ones choose alike, and the latter then fail on its tag (CollectiveTag).
    /// </summary>
    public static void AllreduceInto<T>(Intracommunicator comm, T[] values, T[] result, ReductionOperation<T> op)
    {
        if (AllreduceGoesByBlocks(comm, values))
        {
            AllreduceByBlocks(comm, values, result, op);
            return;
        }
        if (!ReferenceEquals(values, result)) values.CopyTo(result, 0);
        AllreduceByDoubling(comm, result, op);
    }

    /// <summary>Whether <see cref="AllreduceInto"/> combines <paramref name="values"/> by blocks.</summary>
    public static bool AllreduceGoesByBlocks<T>(Intracommunicator comm, T[] values) =>
        values.Length >= comm.Size && (long)values.Length * Unsafe.SizeOf<T>() >= comm.Collectives.AllreduceByBlocksFrom
        && Codec<T[]>.Instance is RawArrayCodec<T>;

    /// <summary>
    /// <see cref="Allreduce"/>'s recursive doubling on an array, element by element and in place. A partner's partial
    /// combination is received into a pooled array (by the link itself: <see cref="ReceiveTarget"/>) and combined
    /// into <paramref name="result"/>.
    /// </summary>
    public static void AllreduceByDoubling<T>(Intracommunicator comm, T[] result, ReductionOperation<T> op)
    {
        int rank = comm.Rank, tag = CollectiveTag.Of(CollectiveStep.Allreduce, OperationCode.Of(op));
        var (powerOfTwo, remainder) = Fold(comm.Size);
        var kind = Operation<T>.KindOf(op);
        var theirs = ArrayPool<T>.Shared.Rent(result.Length);
        try
        {
            // As in Allreduce: ranks beyond the power of two fold into a partner first and get the result last.
            int folded = FoldIn(comm, result, op, remainder, tag, theirs);
            if (folded >= 0)
            {
                for (int mask = 1; mask < powerOfTwo; mask <<= 1)
                {
                    int partner = Unfolded(folded ^ mask, remainder);
                    CheckCount(ExchangeInto(comm, result, 0, result.Length, partner, tag, theirs), result.Length, result.Length);
                    var other = theirs.AsSpan(0, result.Length);
                    if (partner < rank) Elementwise.Combine(other, result, result, op, kind);
                    else Elementwise.Combine(result, other, result, op, kind);
                }
            }
            FoldOut(comm, result, remainder, tag);
        }
        finally
        {
            ArrayPool<T>.Shared.Return(theirs, clearArray: RuntimeHelpers.IsReferenceOrContainsReferences<T>());
        }
    }

    /// <summary>
    /// Rabenseifner's allreduce on an array of a raw type (MPICH's for long messages, commutative operations), of
    /// <paramref name="values"/> into <paramref name="result"/> (which may be <paramref name="values"/>): the ranks
    /// beyond a power of two p fold into partners as in <see cref="Allreduce"/>; the array is cut into p blocks;
    /// recursive halving leaves each of the p ranks with one block reduced over all of them (a reduce-scatter), and
    /// recursive doubling hands the blocks round (an allgather). The halving pairs nearest ranks first, so each
    /// partial combines consecutive ranks and any associative operation stays exact in rank order, not only a
    /// commutative one (MPICH pairs the farthest first, and keeps this algorithm for commutative operations). Each rank sends about 2·(p-1)/p of the array instead
    /// of log2 p arrays, and combines (p-1)/p of it instead of log2 p arrays. Blocks are sent straight from the
    /// arrays, and received into one pooled array to be combined, or in the allgather straight into their place in
    /// <paramref name="result"/> (by the link itself, from 64 KB: a copy out of the pooled array took 10 % of the CPU
    /// samples, 4 ranks and 1 MB). The first halving step reads <paramref name="values"/> and writes its combination
    /// into <paramref name="result"/>, so this rank's values are not first copied there (a copy that took as many CPU
    /// samples as the kernel's copies of the blocks); only a rank that folds, or one alone, needs them in
    /// <paramref name="result"/> first.
    /// </summary>
    public static void AllreduceByBlocks<T>(Intracommunicator comm, T[] values, T[] result, ReductionOperation<T> op)
    {
        var (powerOfTwo, remainder) = Fold(comm.Size);
        var kind = Operation<T>.KindOf(op);
        int tag = CollectiveTag.Of(CollectiveStep.AllreduceByBlocks, OperationCode.Of(op));
        var theirs = ArrayPool<T>.Shared.Rent(result.Length);
        try
        {
            var mine = values; // where this rank's partial combination is: in values until a step writes it into result
            if ((comm.Rank < 2 * remainder || powerOfTwo == 1) && !ReferenceEquals(values, result))
            {
                values.CopyTo(result, 0);
                mine = result;
            }
            int folded = FoldIn(comm, result, op, remainder, tag, theirs);
            if (folded >= 0)
            {
                // Block b is elements [start(b), start(b + 1)); this rank holds blocks [low, high) reduced over its subcube,
                // the ranks that agree with it from bit log2(mask) up: consecutive ranks, so the partner's partial is
                // the lower or the higher neighbour of this rank's, and combining it on that side keeps rank order.
                int Start(int block) => (int)((long)result.Length * block / powerOfTwo);
                int low = 0, high = powerOfTwo;
                for (int mask = 1; mask < powerOfTwo; mask *= 2)
                {
                    int middle = (low + high) / 2;
                    bool partnerIsLower = (folded & mask) != 0;
                    var (keepFrom, keepTo, giveFrom, giveTo) = partnerIsLower ? (middle, high, low, middle) : (low, middle, middle, high);
                    int keep = Start(keepTo) - Start(keepFrom);
                    CheckCount(ExchangeInto(comm, mine, Start(giveFrom), Start(giveTo), Unfolded(folded ^ mask, remainder), tag, theirs), keep, result.Length);
                    ReadOnlySpan<T> ours = mine.AsSpan(Start(keepFrom), keep), partners = theirs.AsSpan(0, keep);
                    var into = result.AsSpan(Start(keepFrom), keep);
                    if (partnerIsLower) Elementwise.Combine(partners, ours, into, op, kind);
                    else Elementwise.Combine(ours, partners, into, op, kind);
                    mine = result;
                    (low, high) = (keepFrom, keepTo);
                }
                // Back in the halving's reverse order: each step's partner holds the block range next to this rank's.
                for (int mask = powerOfTwo / 2; mask > 0; mask /= 2)
                {
                    int width = high - low;
                    var (otherFrom, otherTo) = (folded & mask) == 0 ? (high, high + width) : (low - width, low);
                    int other = Start(otherTo) - Start(otherFrom);
                    CheckCount(ExchangeInto(comm, result, Start(low), Start(high), Unfolded(folded ^ mask, remainder), tag, result, Start(otherFrom)), other, result.Length);
                    (low, high) = (Math.Min(low, otherFrom), Math.Max(high, otherTo));
                }
            }
            FoldOut(comm, result, remainder, tag);
        }
        finally
        {
            ArrayPool<T>.Shared.Return(theirs, clearArray: RuntimeHelpers.IsReferenceOrContainsReferences<T>());
        }
    }

    /// <summary>
    /// The fold of <see cref="Fold"/> for an in-place array allreduce: an even rank below 2·<paramref name="remainder"/>
    /// sends its array to its odd neighbour, which combines it in. Gives the rank's place among the power of two
    /// that go on, or -1 for a rank that waits for the result (<see cref="FoldOut"/>).
    /// </summary>
    private static int FoldIn<T>(Intracommunicator comm, T[] result, ReductionOperation<T> op, int remainder, int tag, T[] theirs)
    {
        int rank = comm.Rank;
        if (rank >= 2 * remainder) return rank - remainder;
        if (rank % 2 == 0)
        {
            Send(comm, result, rank + 1, tag);
            return -1;
        }
        CheckCount(ReceiveInto(comm, rank - 1, tag, theirs), result.Length, result.Length);
        Elementwise.Combine(theirs.AsSpan(0, result.Length), result, result, op, Operation<T>.KindOf(op));
        return rank / 2;
    }

    /// <summary>Hands the result back to the ranks that <see cref="FoldIn"/> left waiting.</summary>
    private static void FoldOut<T>(Intracommunicator comm, T[] result, int remainder, int tag)
    {
        int rank = comm.Rank;
        if (rank >= 2 * remainder) return;
        if (rank % 2 == 1) Send(comm, result, rank - 1, tag);
        else CheckCount(ReceiveInto(comm, rank + 1, tag, result), result.Length, result.Length);
    }

    /// <summary>The rank of the <paramref name="folded"/>-th of the power of two that remain after <see cref="FoldIn"/>.</summary>
    private static int Unfolded(int folded, int remainder) => folded < remainder ? folded * 2 + 1 : folded + remainder;

    /// <summary>
    /// Sends elements [<paramref name="from"/>, <paramref name="to"/>) of <paramref name="array"/> (all of it, or part
    /// of one of a raw type) to <paramref name="partner"/> and receives the partner's elements into
    /// <paramref name="into"/> from element <paramref name="at"/> on (by the link itself, for a large array), at once;
    /// gives how many arrived. The send completes before this returns, so the caller may then overwrite what it sent.
    /// </summary>
    private static int ExchangeInto<T>(Intracommunicator comm, T[] array, int from, int to, int partner, int tag, T[] into, int at = 0)
    {
        var receive = comm.PostReceive(partner, tag, comm.CollectiveContext, into: ReceiveTarget.Of(into, at));
        var send = from == 0 && to == array.Length
            ? comm.StartSend(array, partner, tag, comm.CollectiveContext, synchronous: false) // any element type
            : comm.StartSend(array, from, to - from, partner, tag, comm.CollectiveContext);
        int count = comm.DecodeInto(comm.Complete(receive), comm.CollectiveContext, ref into, at);
        comm.Complete(send);
        return count;
    }

    private static int ReceiveInto<T>(Intracommunicator comm, int source, int tag, T[] into) =>
        comm.DecodeInto(comm.ReceiveMessage(source, tag, comm.CollectiveContext, into: ReceiveTarget.Of(into)), comm.CollectiveContext, ref into);

    /// <summary>A peer's part of an array as long as this rank's has the length this rank's part has.</summary>
    private static void CheckCount(int count, int expected, int arrayLength)
    {
        if (count != expected)
            throw new MpiException(ErrorClass.InvalidCount, $"Element-wise reduction of arrays of different lengths: this rank's has {arrayLength} elements; a peer sent {count} where {expected} were due.");
    }

    /// <summary>
    /// Recursive doubling prefix reduction (MPICH's scan): each rank keeps the partial over its aligned block of
    /// 2^k ranks and folds lower partners' partials into its result. Exclusive: rank 0 gets default.
    /// </summary>
    public static T Scan<T>(Intracommunicator comm, T value, ReductionOperation<T> op, bool inclusive)
    {
        int rank = comm.Rank, size = comm.Size, tag = CollectiveTag.Of(CollectiveStep.Scan, OperationCode.Of(op));
        T partial = value, result = inclusive ? value : default!;
        bool haveResult = inclusive;
        for (int mask = 1; mask < size; mask <<= 1)
        {
            int partner = rank ^ mask;
            if (partner >= size) continue;
            var other = Exchange(comm, partial, partner, partner, tag);
            if (partner < rank)
            {
                partial = op(other, partial);
                result = haveResult ? op(other, result) : other;
                haveResult = true;
            }
            else partial = op(partial, other);
        }
        return result;
    }

    /// <summary>
    /// Binomial gather towards <paramref name="root"/>: each rank forwards the concatenated blocks of its subtree,
    /// which covers consecutive ranks relative to the root; the root puts blocks back in rank order.
    /// </summary>
    public static T[]? Gatherv<T>(Intracommunicator comm, T[] values, int root, Func<int, int> countAtRoot)
    {
        int size = comm.Size, relative = Relative(comm.Rank, root, size), tag = CollectiveTag.Of(CollectiveStep.Gather, root: root);
        var subtree = new List<T>(values);
        for (int mask = 1; mask < size; mask <<= 1)
        {
            if ((relative & mask) != 0)
            {
                Send(comm, subtree.ToArray(), Absolute(relative - mask, root, size), tag);
                return null;
            }
            if (relative + mask < size) subtree.AddRange(Receive<T[]>(comm, Absolute(relative + mask, root, size), tag));
        }

        // At the root the blocks arrived in relative order root, root + 1, ...; rotate them back to rank order.
        var offsets = new int[size + 1];
        for (int rank = 0; rank < size; rank++) offsets[rank + 1] = offsets[rank] + countAtRoot(rank);
        if (offsets[size] != subtree.Count)
            throw new MpiException(ErrorClass.InvalidCount, $"Gather at root {root}: the counts add up to {offsets[size]} elements but {subtree.Count} arrived.");
        var result = new T[subtree.Count];
        int position = 0;
        for (int i = 0; i < size; i++)
        {
            int rank = Absolute(i, root, size), count = countAtRoot(rank);
            subtree.CopyTo(position, result, offsets[rank], count);
            position += count;
        }
        return result;
    }

    /// <summary>
    /// Binomial scatter from <paramref name="root"/>: each rank receives the blocks of its whole subtree from its
    /// parent and passes on its children's parts, halving the range each round.
    /// </summary>
    public static T[] Scatterv<T>(Intracommunicator comm, T[]? values, int root, int[] counts)
    {
        int size = comm.Size, relative = Relative(comm.Rank, root, size), tag = CollectiveTag.Of(CollectiveStep.Scatter, root: root);
        // Offsets of each relative rank's block within a buffer laid out in relative order.
        var offsets = new int[size + 1];
        for (int i = 0; i < size; i++) offsets[i + 1] = offsets[i] + counts[Absolute(i, root, size)];

        T[] subtree;
        int mask = 1;
        if (relative == 0)
        {
            // The root's array is in rank order; lay it out in relative order so every subtree is one slice.
            var rankOffsets = Offsets(counts);
            subtree = new T[offsets[size]];
            for (int i = 0; i < size; i++)
            {
                int rank = Absolute(i, root, size);
                Array.Copy(values!, rankOffsets[rank], subtree, offsets[i], counts[rank]);
            }
            while (mask < size) mask <<= 1;
        }
        else
        {
            while ((relative & mask) == 0) mask <<= 1;
            subtree = Receive<T[]>(comm, Absolute(relative - mask, root, size), tag);
        }

        // subtree holds the blocks of relative ranks [relative, relative + mask) ∩ [0, size).
        for (mask >>= 1; mask > 0; mask >>= 1)
        {
            int child = relative + mask;
            if (child >= size) continue;
            int end = Math.Min(child + mask, size);
            Send(comm, subtree[(offsets[child] - offsets[relative])..(offsets[end] - offsets[relative])], Absolute(child, root, size), tag);
        }
        return subtree[..(offsets[relative + 1] - offsets[relative])];
    }

    /// <summary>Ring allgather: in n - 1 steps each rank passes the block it last received to its right neighbour.</summary>
    public static T[] Allgatherv<T>(Intracommunicator comm, T[] values)
    {
        int rank = comm.Rank, size = comm.Size;
        int right = (rank + 1) % size, left = (rank - 1 + size) % size;
        var blocks = new T[size][];
        blocks[rank] = values;
        for (int step = 0; step < size - 1; step++)
        {
            int sending = (rank - step + size) % size, receiving = (rank - step - 1 + size) % size;
            blocks[receiving] = Exchange(comm, blocks[sending], right, left, AllgatherTag);
        }
        return [.. blocks.SelectMany(block => block)];
    }

    /// <summary>Pairwise exchange: in step k each rank sends to rank + k and receives from rank - k.</summary>
    public static T[] Alltoallv<T>(Intracommunicator comm, T[] values, int[] sendCounts, int[] receiveCounts)
    {
        int rank = comm.Rank, size = comm.Size;
        var sendOffsets = Offsets(sendCounts);
        var receiveOffsets = Offsets(receiveCounts);
        var result = new T[receiveOffsets[size]];
        if (sendCounts[rank] != receiveCounts[rank])
            throw new MpiException(ErrorClass.InvalidCount, $"Rank {rank} sends {sendCounts[rank]} elements to itself but expects {receiveCounts[rank]}.");
        Array.Copy(values, sendOffsets[rank], result, receiveOffsets[rank], sendCounts[rank]);
        for (int step = 1; step < size; step++)
        {
            int dest = (rank + step) % size, source = (rank - step + size) % size;
            var block = Exchange(comm, values[sendOffsets[dest]..sendOffsets[dest + 1]], dest, source, AlltoallTag);
            if (block.Length != receiveCounts[source])
                throw new MpiException(ErrorClass.InvalidCount, $"Rank {rank} expected {receiveCounts[source]} elements from rank {source} but received {block.Length}.");
            block.CopyTo(result, receiveOffsets[source]);
        }
        return result;
    }

    private static int[] Offsets(int[] counts)
    {
        var offsets = new int[counts.Length + 1];
        for (int i = 0; i < counts.Length; i++) offsets[i + 1] = offsets[i] + counts[i];
        return offsets;
    }

    /// <summary>
    /// MPICH's fold for recursive doubling on <paramref name="size"/> ranks: the largest power of two that is at most
    /// the size, and how many ranks beyond it fold into a partner (an odd rank below twice that takes its even
    /// neighbour's value first and hands it the result last).
    /// </summary>
    private static (int PowerOfTwo, int Remainder) Fold(int size)
    {
        int powerOfTwo = 1;
        while (powerOfTwo * 2 <= size) powerOfTwo *= 2;
        return (powerOfTwo, size - powerOfTwo);
    }

    private static int Relative(int rank, int root, int size) => (rank - root + size) % size;

    private static int Absolute(int relative, int root, int size) => (relative + root) % size;

    internal static void Send<T>(Intracommunicator comm, T value, int dest, int tag) =>
        comm.Complete(comm.StartSend(value, dest, tag, comm.CollectiveContext, synchronous: false));

    internal static T Receive<T>(Intracommunicator comm, int source, int tag) =>
        comm.Decode<T>(comm.Complete(PostReceive<T>(comm, source, tag)), comm.CollectiveContext);

    /// <summary>
    /// Sends and receives at once, so large (rendezvous) messages between partners cannot deadlock. The receive is
    /// posted first: a large array then arrives straight into the array it returns, not through a buffer and a copy.
    /// </summary>
    private static T Exchange<T>(Intracommunicator comm, T value, int dest, int source, int tag)
    {
        var receive = PostReceive<T>(comm, source, tag);
        var send = comm.StartSend(value, dest, tag, comm.CollectiveContext, synchronous: false);
        var received = comm.Decode<T>(comm.Complete(receive), comm.CollectiveContext);
        comm.Complete(send);
        return received;
    }

    private static ReceiveOperation PostReceive<T>(Intracommunicator comm, int source, int tag) =>
        comm.PostReceive(source, tag, comm.CollectiveContext, Codec<T>.Instance.ReturnsNewArray);
}
