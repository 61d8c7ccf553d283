using Pmpi.Collectives;
using Pmpi.Hosting;
using static Pmpi.Intracommunicator;

namespace Pmpi;

/// <summary>
/// A communicator between two disjoint groups (MPI intercommunicator, MPI-4.1 §7.6): point-to-point ranks name the
/// remote group's ranks, and collectives move data from one group to the other. <see cref="Communicator.Size"/> and
/// <see cref="Communicator.Rank"/> are the calling rank's own group's; <see cref="RemoteSize"/> the other's.
/// </summary>
/// <remarks>
/// In a rooted collective the root passes <see cref="Root"/>, the other ranks of its group <see cref="Null"/>, and
/// the ranks of the other group the root's rank in that group.
/// </remarks>
public sealed class Intercommunicator : Communicator
{
    /// <summary>Passed as the root by the root of a rooted collective (MPI_ROOT).</summary>
    public const int Root = -4;

    /// <summary>Passed as the root by the root group's other ranks, which take no part (MPI_PROC_NULL).</summary>
    public const int Null = ProcNull;

    // The local group's own communicator, for the collectives' steps within the group.
    private readonly Intracommunicator _local;

    /// <summary>
    /// Joins two disjoint groups (MPI_Intercomm_create; collective over both). Each group's ranks call it with their
    /// own communicator and the same <paramref name="localLeader"/>; the two leaders also name each other through
    /// <paramref name="bridgeComm"/>, a communicator they both belong to (only significant at the leaders), and use
    /// <paramref name="tag"/> there.
    /// </summary>
    public Intercommunicator(Intracommunicator localComm, int localLeader, Intracommunicator? bridgeComm, int remoteLeader, int tag)
        : this(Create(localComm, localLeader, bridgeComm, remoteLeader, tag))
    {
    }

    /// <summary>The spawning ranks' side of a spawn: <paramref name="local"/> (a duplicate of the spawning communicator) facing the spawned world.</summary>
    internal Intercommunicator(Intracommunicator local, int context, int[] spawned)
        : this(new Setup(local, context, spawned))
    {
    }

    private Intercommunicator(Setup setup)
        : base(setup.Local.Runtime, setup.Context, setup.Local.Members.ToArray(), setup.Local.Rank, setup.Remote) => _local = setup.Local;

    /// <summary>
    /// A spawned world's side of its spawn (collective over the world, at initialization): the world facing the
    /// spawning ranks (<paramref name="parents"/>, job ranks), in the context they agreed, reserved here first; it
    /// becomes the runtime's <see cref="RankRuntime.Parent"/>, and a twin its first connected world.
    /// </summary>
    internal static void ToParents(RankRuntime runtime, int context, int[] parents)
    {
        runtime.MarkContextUsed(context);
        var local = runtime.World.Dup();
        runtime.Connected.Add(new Intercommunicator(local, context, parents));
        runtime.Parent = new Intercommunicator(local, context, parents);
    }

    /// <summary>The number of ranks in the other group (MPI_Comm_remote_size).</summary>
    public int RemoteSize => Peers.Length;

    /// <summary>The other group (MPI_Comm_remote_group).</summary>
    public Group RemoteGroup => new(Peers.ToArray());

    /// <summary>
    /// One intracommunicator of both groups (MPI_Intercomm_merge; collective): the group that passed false first; if
    /// both passed the same, the group holding the lower world rank first.
    /// </summary>
    public Intracommunicator Merge(bool upper)
    {
        var (context, remoteUpper) = AgreeAcrossGroups(upper ? 1 : 0);
        var local = Members.ToArray();
        var remote = Peers.ToArray();
        bool localFirst = upper != (remoteUpper == 1) ? !upper : local.Min() < remote.Min();
        int[] members = localFirst ? [.. local, .. remote] : [.. remote, .. local];
        return new Intracommunicator(Runtime, context, members, Array.IndexOf(members, local[Rank]));
    }

    /// <inheritdoc/>
    public override Intercommunicator Clone()
    {
        var (context, _) = AgreeAcrossGroups(0);
        var copy = new Intercommunicator(new Setup(_local.Dup(), context, Peers.ToArray()));
        copy.Attributes.CopyFrom(Attributes);
        return copy;
    }

    /// <summary>Returns once every rank of both groups has called it (MPI_Barrier on an intercommunicator).</summary>
    public override void Barrier() => IntercommunicatorCollectives.Barrier(this, _local);

    /// <summary>The root's value on every rank of the other group (MPI_Bcast); see the class remarks for <paramref name="root"/>.</summary>
    public void Broadcast<T>(ref T value, int root) => value = IntercommunicatorCollectives.Broadcast(this, _local, value, CheckedRoot(root));

    /// <summary>The root's array on every rank of the other group (MPI_Bcast of a buffer).</summary>
    public void Broadcast<T>(ref T[] values, int root) => values = IntercommunicatorCollectives.Broadcast(this, _local, values, CheckedRoot(root));

    /// <summary>The other group's values in rank order at the root; null elsewhere (MPI_Gather).</summary>
    public T[]? Gather<T>(T value, int root) => IntercommunicatorCollectives.Gather(this, _local, value, CheckedRoot(root));

    /// <summary>The other group's values combined in rank order at the root; default elsewhere (MPI_Reduce).</summary>
    public T Reduce<T>(T value, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(op);
        return IntercommunicatorCollectives.Reduce(this, _local, value, op, CheckedRoot(root));
    }

    /// <summary>The root's side of Scatter: element i goes to rank i of the other group (MPI_Scatter with MPI_ROOT).</summary>
    public void Scatter<T>(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (values.Length != RemoteSize)
            throw new MpiException(ErrorClass.InvalidCount, $"'values' must hold {RemoteSize} elements, one per rank of the other group; it holds {values.Length}.");
        IntercommunicatorCollectives.Scatter(this, _local, values, Root);
    }

    /// <summary>The receiving side of Scatter: this rank's element of the root's array (<paramref name="root"/> is its rank in the other group).</summary>
    public T Scatter<T>(int root)
    {
        CheckRank(root, nameof(root));
        return IntercommunicatorCollectives.Scatter<T>(this, _local, null, root);
    }

    /// <summary>The side of Scatter of the root group's other ranks, which take no part (MPI_Scatter with MPI_PROC_NULL).</summary>
    public void Scatter<T>() => IntercommunicatorCollectives.Scatter<T>(this, _local, null, Null);

    /// <summary>The other group's values in rank order, on every rank (MPI_Allgather on an intercommunicator).</summary>
    public T[] Allgather<T>(T value) => IntercommunicatorCollectives.Allgather(this, _local, value);

    /// <summary>The combination of the other group's values, on every rank (MPI_Allreduce on an intercommunicator).</summary>
    public T Allreduce<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return IntercommunicatorCollectives.Allreduce(this, _local, value, op);
    }

    /// <summary>Sends <paramref name="values"/>[j] to rank j of the other group and returns what each of its ranks sent here (MPI_Alltoall).</summary>
    public T[] Alltoall<T>(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (values.Length != RemoteSize)
            throw new MpiException(ErrorClass.InvalidCount, $"'values' must hold {RemoteSize} elements, one per rank of the other group; it holds {values.Length}.");
        return IntercommunicatorCollectives.Alltoall(this, values);
    }

    // ---- MPI.NET's array and output forms ----

    /// <summary>The other group's values into the root's <paramref name="outValues"/>; others keep theirs (MPI_Gather).</summary>
    public void Gather<T>(T inValue, int root, ref T[] outValues) => IntoAtRoot(ref outValues, Gather(inValue, root));

    /// <summary>The other group's arrays combined element by element at the root; null elsewhere (MPI_Reduce of a buffer).</summary>
    public T[]? Reduce<T>(T[] values, ReductionOperation<T> op, int root)
    {
        // The root's group contributes nothing, so its ranks may pass null (MPI.NET's IntercommunicatorTest does).
        if (root is not (Root or Null)) ArgumentNullException.ThrowIfNull(values);
        var result = IntercommunicatorCollectives.Reduce(this, _local, values, Elementwise.Of(op), CheckedRoot(root));
        return root == Root ? result : null;
    }

    /// <summary>The other group's arrays combined element by element into the root's <paramref name="outValues"/>.</summary>
    public void Reduce<T>(T[] inValues, ReductionOperation<T> op, int root, ref T[] outValues) => IntoAtRoot(ref outValues, Reduce(inValues, op, root));

    /// <summary>The other group's values in rank order into <paramref name="outValues"/>, on every rank.</summary>
    public void Allgather<T>(T inValue, ref T[] outValues) => Into(ref outValues, Allgather(inValue));

    /// <summary>The other group's arrays combined element by element, on every rank (MPI_Allreduce of a buffer).</summary>
    public T[] Allreduce<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        return IntercommunicatorCollectives.Allreduce(this, _local, values, Elementwise.Of(op));
    }

    /// <summary>The other group's arrays combined element by element into <paramref name="outValues"/>, on every rank.</summary>
    public void Allreduce<T>(T[] inValues, ReductionOperation<T> op, ref T[] outValues) => Into(ref outValues, Allreduce(inValues, op));

    /// <summary>What each rank of the other group sent here, into <paramref name="outValues"/> (MPI_Alltoall).</summary>
    public void Alltoall<T>(T[] inValues, ref T[] outValues) => Into(ref outValues, Alltoall(inValues));

    // ---- Flattened forms and ReduceScatter: counts are per rank of the group that receives ----

    /// <summary>The root's side of GatherFlattened: the other group's arrays of <paramref name="count"/> elements each, concatenated in rank order.</summary>
    public T[] GatherFlattened<T>(int count) => GatherFlattened<T>(Enumerable.Repeat(count, RemoteSize).ToArray());

    /// <summary>The root's side of GatherFlattened: the other group's arrays, <paramref name="counts"/>[i] elements from its rank i, concatenated in rank order (MPI_Gatherv with MPI_ROOT).</summary>
    public T[] GatherFlattened<T>(int[] counts)
    {
        CheckCounts(counts, RemoteSize, nameof(counts));
        return IntercommunicatorCollectives.GatherFlattened<T>(this, _local, [], counts, Root)!;
    }

    /// <summary>The root's side of GatherFlattened, into <paramref name="outValues"/>.</summary>
    public void GatherFlattened<T>(int count, ref T[] outValues) => Into(ref outValues, GatherFlattened<T>(count));

    /// <summary>The root's side of GatherFlattened with a count per rank of the other group, into <paramref name="outValues"/>.</summary>
    public void GatherFlattened<T>(int[] counts, ref T[] outValues) => Into(ref outValues, GatherFlattened<T>(counts));

    /// <summary>The sending side of GatherFlattened: this rank's array goes to <paramref name="root"/>, its rank in the other group.</summary>
    public void GatherFlattened<T>(T[] inValues, int root)
    {
        ArgumentNullException.ThrowIfNull(inValues);
        CheckRank(root, nameof(root));
        IntercommunicatorCollectives.GatherFlattened(this, _local, inValues, null, root);
    }

    /// <summary>The side of GatherFlattened of the root group's other ranks, which take no part.</summary>
    public void GatherFlattened<T>() => IntercommunicatorCollectives.GatherFlattened<T>(this, _local, [], null, Null);

    /// <summary>The root's side of ScatterFromFlattened: consecutive blocks of <paramref name="count"/> elements go to the other group's ranks in order.</summary>
    public void ScatterFromFlattened<T>(T[] inValues, int count) => ScatterFromFlattened(inValues, Enumerable.Repeat(count, RemoteSize).ToArray());

    /// <summary>The root's side of ScatterFromFlattened: block i, of <paramref name="counts"/>[i] elements, goes to rank i of the other group (MPI_Scatterv with MPI_ROOT).</summary>
    public void ScatterFromFlattened<T>(T[] inValues, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(inValues);
        CheckCounts(counts, RemoteSize, nameof(counts));
        if (inValues.Length != counts.Sum())
            throw new MpiException(ErrorClass.InvalidCount, $"'inValues' must hold {counts.Sum()} elements, the sum of the counts; it holds {inValues.Length}.");
        IntercommunicatorCollectives.ScatterFromFlattened(this, _local, inValues, counts, Root);
    }

    /// <summary>The receiving side of ScatterFromFlattened: this rank's block of <paramref name="count"/> elements, from <paramref name="root"/> in the other group.</summary>
    public void ScatterFromFlattened<T>(int count, int root, ref T[] outValues) => ScatterFromFlattened(Enumerable.Repeat(count, Size).ToArray(), root, ref outValues);

    /// <summary>The receiving side of ScatterFromFlattened: this rank's block, <paramref name="counts"/>[i] elements for rank i of this group.</summary>
    public void ScatterFromFlattened<T>(int[] counts, int root, ref T[] outValues)
    {
        CheckCounts(counts, Size, nameof(counts));
        CheckRank(root, nameof(root));
        Into(ref outValues, IntercommunicatorCollectives.ScatterFromFlattened<T>(this, _local, null, counts, root));
    }

    /// <summary>The side of ScatterFromFlattened of the root group's other ranks, which take no part.</summary>
    public void ScatterFromFlattened<T>() => IntercommunicatorCollectives.ScatterFromFlattened<T>(this, _local, null, [], Null);

    /// <summary>Any side of ScatterFromFlattened, chosen by <paramref name="root"/> as in the other forms (MPI.NET's form).</summary>
    public void ScatterFromFlattened<T>(T[]? inValues, int count, int root, ref T[] outValues) =>
        ScatterFromFlattened(inValues, Enumerable.Repeat(count, root == Root ? RemoteSize : Size).ToArray(), root, ref outValues);

    /// <summary>Any side of ScatterFromFlattened, chosen by <paramref name="root"/>; <paramref name="counts"/> has one count per rank of the receiving group.</summary>
    public void ScatterFromFlattened<T>(T[]? inValues, int[] counts, int root, ref T[] outValues)
    {
        switch (root)
        {
            case Root: ScatterFromFlattened(inValues!, counts); break;
            case Null: ScatterFromFlattened<T>(); break;
            default: ScatterFromFlattened(counts, root, ref outValues); break;
        }
    }

    /// <summary>The other group's arrays of <paramref name="count"/> elements each, concatenated in rank order, on every rank.</summary>
    public T[] AllgatherFlattened<T>(T[] values, int count) => AllgatherFlattened(values, Enumerable.Repeat(count, RemoteSize).ToArray());

    /// <summary>The other group's arrays, <paramref name="counts"/>[i] elements from its rank i, concatenated in rank order, on every rank (MPI_Allgatherv).</summary>
    public T[] AllgatherFlattened<T>(T[] values, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckCounts(counts, RemoteSize, nameof(counts));
        return IntercommunicatorCollectives.AllgatherFlattened(this, _local, values, counts);
    }

    /// <summary>The other group's arrays of <paramref name="count"/> elements each, into <paramref name="outValues"/>.</summary>
    public void AllgatherFlattened<T>(T[] inValues, int count, ref T[] outValues) => Into(ref outValues, AllgatherFlattened(inValues, count));

    /// <summary>The other group's arrays, <paramref name="counts"/>[i] from its rank i, into <paramref name="outValues"/>.</summary>
    public void AllgatherFlattened<T>(T[] inValues, int[] counts, ref T[] outValues) => Into(ref outValues, AllgatherFlattened(inValues, counts));

    /// <summary>
    /// Sends consecutive blocks of <paramref name="sendCounts"/>[j] elements to rank j of the other group and returns
    /// the blocks received, <paramref name="receiveCounts"/>[i] from its rank i, in rank order (MPI_Alltoallv).
    /// </summary>
    public T[] AlltoallFlattened<T>(T[] values, int[] sendCounts, int[] receiveCounts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckCounts(sendCounts, RemoteSize, nameof(sendCounts));
        CheckCounts(receiveCounts, RemoteSize, nameof(receiveCounts));
        if (values.Length != sendCounts.Sum())
            throw new MpiException(ErrorClass.InvalidCount, $"'values' must hold {sendCounts.Sum()} elements, the sum of sendCounts; it holds {values.Length}.");
        return IntercommunicatorCollectives.AlltoallFlattened(this, values, sendCounts, receiveCounts);
    }

    /// <summary>The blocks received from the other group's ranks, into <paramref name="outValues"/> (MPI_Alltoallv).</summary>
    public void AlltoallFlattened<T>(T[] inValues, int[] sendCounts, int[] recvCounts, ref T[] outValues) =>
        Into(ref outValues, AlltoallFlattened(inValues, sendCounts, recvCounts));

    /// <summary>
    /// The other group's arrays combined element by element, in blocks: rank i of this group gets the
    /// <paramref name="counts"/>[i] elements after those of ranks below it (MPI_Reduce_scatter on an intercommunicator).
    /// <paramref name="counts"/> is the same on every rank of a group, and each group's add up to the other's array length.
    /// </summary>
    public T[] ReduceScatter<T>(T[] values, ReductionOperation<T> op, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckCounts(counts, Size, nameof(counts));
        return IntercommunicatorCollectives.ReduceScatter(this, _local, values, Elementwise.Of(op), counts);
    }

    /// <summary>This rank's block of the other group's element-wise combination, into <paramref name="outValues"/>.</summary>
    public void ReduceScatter<T>(T[] inValues, ReductionOperation<T> op, int[] counts, ref T[] outValues) => Into(ref outValues, ReduceScatter(inValues, op, counts));

    // ---- New intercommunicators ----

    /// <summary>
    /// Splits both groups by <paramref name="color"/> (MPI_Comm_split on an intercommunicator; collective over both):
    /// the ranks of one color in this group, ordered by <paramref name="key"/> then old rank, face the ranks of the
    /// same color in the other group. Null for <see cref="Intracommunicator.Undefined"/>, or when no rank of the other
    /// group chose this color.
    /// </summary>
    public Intercommunicator? Split(int color, int key)
    {
        var part = _local.Split(color, key);
        var choices = _local.Allgather((color, key));
        var (context, theirs) = AgreeAcrossGroups([.. choices.SelectMany(choice => new[] { choice.color, choice.key })]);
        var remote = Enumerable.Range(0, RemoteSize).Where(r => theirs[2 * r] == color)
            .OrderBy(r => theirs[2 * r + 1]).ThenBy(r => r).Select(r => Peers[r]).ToArray();
        return part is null || remote.Length == 0 ? null : new Intercommunicator(new Setup(part, context, remote));
    }

    /// <summary>
    /// The intercommunicator between <paramref name="group"/>, a subgroup of this rank's group that every rank of the
    /// group passes, and the subgroup the other group passes (MPI_Comm_create on an intercommunicator; collective over
    /// both). Null on ranks outside <paramref name="group"/>, and everywhere when either subgroup is empty.
    /// </summary>
    public Intercommunicator? Create(Group group)
    {
        var part = _local.Create(group);
        var (context, theirs) = AgreeAcrossGroups(group.Members.ToArray());
        return part is null || theirs.Length == 0 ? null : new Intercommunicator(new Setup(part, context, theirs));
    }

    /// <summary>
    /// A context free on every rank of both groups, and a value from the other group: each group agrees on its highest
    /// free context, the leaders swap theirs with <paramref name="value"/> (the same on every rank of a group), and
    /// each leader tells its group.
    /// </summary>
    private (int Context, int RemoteValue) AgreeAcrossGroups(int value)
    {
        var (context, theirs) = AgreeAcrossGroups([value]);
        return (context, theirs[0]);
    }

    private (int Context, int[] RemoteValues) AgreeAcrossGroups(int[] values)
    {
        int[] mine = [_local.AgreeOnContext(), .. values];
        int[] theirs = Rank == 0 ? IntercommunicatorCollectives.ExchangeWithRemoteLeader(this, mine) : [];
        _local.Broadcast(ref theirs, 0);
        return (Math.Max(mine[0], theirs[0]), theirs[1..]);
    }

    // counts has one entry per rank of the group that receives: this one (ranks == Size) or the other.
    private void CheckCounts(int[] counts, int ranks, string argument)
    {
        ArgumentNullException.ThrowIfNull(counts, argument);
        if (counts.Length != ranks || counts.Any(c => c < 0))
            throw new MpiException(ErrorClass.InvalidCount, $"'{argument}' must hold {ranks} non-negative counts, one per rank of the receiving group; it holds [{string.Join(", ", counts)}].");
    }

    private int CheckedRoot(int root)
    {
        if (root is not (Root or Null)) CheckRank(root, nameof(root));
        return root;
    }

    private static Setup Create(Intracommunicator localComm, int localLeader, Intracommunicator? bridgeComm, int remoteLeader, int tag)
    {
        ArgumentNullException.ThrowIfNull(localComm);
        localComm.CheckRank(localLeader, nameof(localLeader));
        bool leader = localComm.Rank == localLeader;
        if (leader)
        {
            if (bridgeComm is null) throw new MpiException(ErrorClass.InvalidCommunicator, $"Rank {localComm.Rank} is the local leader, so it needs the bridge communicator it shares with the remote leader.");
            bridgeComm.CheckRank(remoteLeader, nameof(remoteLeader));
        }

        // The local group's communicator for the collectives' inner steps, with its own context.
        var local = localComm.Dup();
        int localContext = local.AgreeOnContext();
        // The leaders swap [highest free context, world ranks of the group...]; each tells its group.
        int[] remote = null!; // allocated by the receive, to the remote group's size
        if (leader)
        {
            int[] mine = [localContext, .. localComm.Members];
            bridgeComm!.SendReceive(mine, remoteLeader, tag, remoteLeader, tag, ref remote, out _);
        }
        localComm.Broadcast(ref remote, localLeader);
        var remoteMembers = remote[1..];
        if (remoteMembers.Intersect(localComm.Members.ToArray()).FirstOrDefault(-1) is var shared and >= 0)
            throw new MpiException(ErrorClass.InvalidArgument, $"World rank {shared} is in both groups; an intercommunicator joins disjoint groups.");
        return new Setup(local, Math.Max(localContext, remote[0]), remoteMembers);
    }

    private sealed record Setup(Intracommunicator Local, int Context, int[] Remote);
}
