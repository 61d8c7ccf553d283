using System.Diagnostics.CodeAnalysis;
using Pmpi.Collectives;
using Pmpi.Hosting;
using Pmpi.Payloads;
using Google.Protobuf;
using Pmpi.Rpc.V1;

namespace Pmpi;

/// <summary>
/// A communicator within one group of ranks (MPI intracommunicator): point-to-point plus the MPI-1 collectives and
/// the constructors of new communicators. Every member must call a collective, in the same order.
/// </summary>
public partial class Intracommunicator : Communicator
{
    /// <summary>The color that leaves a rank out of every communicator made by <see cref="Split"/> (MPI_UNDEFINED).</summary>
    public const int Undefined = -1;

    internal Intracommunicator(RankRuntime runtime, int context, int[] members, int rank, CollectiveSequence? sequence = null)
        : base(runtime, context, members, rank, sequence: sequence)
    {
        // Every constructor path (world, Self, Dup, Split, Create, topologies, merges, a topology's levels) comes here,
        // so every communicator chooses its collectives' algorithms once, from its members and the rank's options.
        Collectives = CollectiveSelection.For(this, runtime.Device.Places, runtime.Collectives);
    }

    // ---- Synchronisation and data movement ----

    /// <summary>
    /// Returns once every member has called it (MPI_Barrier; dissemination, ⌈log2 n⌉ rounds; across nodes or domains,
    /// within each node, then among node and domain leaders, and back).
    /// </summary>
    public override void Barrier()
    {
        if (Topology is { } levels) HierarchicalCollectives.Barrier(levels);
        else CollectiveAlgorithms.Barrier(this);
    }

    /// <summary>Makes <paramref name="value"/> on every rank equal the root's (MPI_Bcast; binomial tree, by node and domain when the communicator spans several).</summary>
    public void Broadcast<T>(ref T value, int root) =>
        value = Codec<T>.Instance is IArrayBroadcast<T> array ? array.Broadcast(this, value, Checked(root)) : BroadcastValue(value, Checked(root));

    /// <summary>
    /// Broadcasts an array; a non-root array of the root's length is filled in place, otherwise replaced. A large
    /// array of a raw type goes between nodes by blocks (scatter, then a ring).
    /// </summary>
    public void Broadcast<T>(ref T[] values, int root)
    {
        if (Topology is null)
        {
            values = CollectiveAlgorithms.BroadcastInto(this, values, Checked(root));
            return;
        }
        var received = HierarchicalCollectives.Broadcast(this, Topology, values, Checked(root), CollectiveAlgorithms.BroadcastInto);
        // A rank that the root's array was handed to on its way up to the leaders got it as a new array.
        if (Rank != root && values is not null && !ReferenceEquals(values, received) && values.Length == received.Length) received.CopyTo(values, 0);
        else values = received;
    }

    /// <summary>Every rank's value, in rank order, at <paramref name="root"/>; null elsewhere (MPI_Gather; binomial tree, by node and domain when the communicator spans several).</summary>
    public T[]? Gather<T>(T value, int root) => Topology is { } levels
        ? HierarchicalCollectives.Gather(this, levels, value, Checked(root))
        : CollectiveAlgorithms.Gatherv(this, [value], Checked(root), _ => 1);

    /// <summary>
    /// Concatenates every rank's array in rank order at <paramref name="root"/>; null elsewhere (MPI_Gatherv).
    /// <paramref name="counts"/>, the length of each rank's array, matters only at the root.
    /// </summary>
    public T[]? GatherFlattened<T>(T[] values, int[] counts, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (Rank == root) CheckCounts(counts, nameof(counts));
        return CollectiveAlgorithms.Gatherv(this, values, Checked(root), rank => counts[rank]);
    }

    /// <summary>Gathers arrays of one common length (MPI_Gather of several elements per rank).</summary>
    public T[]? GatherFlattened<T>(T[] values, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        return CollectiveAlgorithms.Gatherv(this, values, Checked(root), _ => values.Length);
    }

    /// <summary>Element <see cref="Communicator.Rank"/> of the root's array, on every rank (MPI_Scatter; binomial tree).</summary>
    public T Scatter<T>(T[]? values, int root)
    {
        if (Rank == Checked(root)) CheckLength(values, Size, nameof(values));
        return CollectiveAlgorithms.Scatterv(this, values, root, Ones)[0];
    }

    /// <summary>
    /// Splits the root's array into consecutive blocks of <paramref name="counts"/>[rank] elements and gives each
    /// rank its block (MPI_Scatterv). <paramref name="counts"/> must be the same on every rank.
    /// </summary>
    public T[] ScatterFromFlattened<T>(T[]? values, int[] counts, int root)
    {
        CheckCounts(counts, nameof(counts));
        if (Rank == Checked(root)) CheckLength(values, counts.Sum(), nameof(values));
        return CollectiveAlgorithms.Scatterv(this, values, root, counts);
    }

    /// <summary>Every rank's value in rank order, on every rank (MPI_Allgather; ring, by node and domain when the communicator spans several).</summary>
    public T[] Allgather<T>(T value) => Topology is { } levels ? HierarchicalCollectives.Allgather(levels, value) : CollectiveAlgorithms.Allgatherv(this, [value]);

    /// <summary>Every rank's array concatenated in rank order, on every rank (MPI_Allgatherv; ring).</summary>
    public T[] AllgatherFlattened<T>(T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        return CollectiveAlgorithms.Allgatherv(this, values);
    }

    /// <summary>Every rank's array of <paramref name="count"/> elements, concatenated in rank order (MPI.NET's form).</summary>
    public T[] AllgatherFlattened<T>(T[] values, int count) => AllgatherFlattened(values, Enumerable.Repeat(count, Size).ToArray());

    /// <summary>Every rank's array of <paramref name="counts"/>[rank] elements, concatenated in rank order (MPI_Allgatherv).</summary>
    public T[] AllgatherFlattened<T>(T[] values, int[] counts)
    {
        CheckCounts(counts, nameof(counts));
        CheckLength(values, counts[Rank], nameof(values));
        var result = CollectiveAlgorithms.Allgatherv(this, values);
        if (result.Length != counts.Sum())
            throw new MpiException(ErrorClass.InvalidCount, $"Allgather: the counts add up to {counts.Sum()} elements but {result.Length} arrived.");
        return result;
    }

    /// <summary>Gives each rank its block of <paramref name="count"/> elements of the root's array (MPI_Scatter of several elements).</summary>
    public T[] ScatterFromFlattened<T>(T[]? values, int count, int root) => ScatterFromFlattened(values, Enumerable.Repeat(count, Size).ToArray(), root);

    /// <summary>Sends consecutive blocks of <paramref name="count"/> elements to each rank (MPI_Alltoall of several elements).</summary>
    public T[] AlltoallFlattened<T>(T[] values, int count)
    {
        var counts = Enumerable.Repeat(count, Size).ToArray();
        return AlltoallFlattened(values, counts, counts);
    }

    /// <summary>Sends <paramref name="values"/>[j] to rank j and returns what each rank sent here (MPI_Alltoall; pairwise exchange).</summary>
    public T[] Alltoall<T>(T[] values)
    {
        CheckLength(values, Size, nameof(values));
        return CollectiveAlgorithms.Alltoallv(this, values, Ones, Ones);
    }

    /// <summary>
    /// Sends consecutive blocks of <paramref name="sendCounts"/>[j] elements to each rank j and returns the blocks
    /// received, <paramref name="receiveCounts"/>[i] from each rank i, concatenated in rank order (MPI_Alltoallv).
    /// </summary>
    public T[] AlltoallFlattened<T>(T[] values, int[] sendCounts, int[] receiveCounts)
    {
        CheckCounts(sendCounts, nameof(sendCounts));
        CheckCounts(receiveCounts, nameof(receiveCounts));
        CheckLength(values, sendCounts.Sum(), nameof(values));
        return CollectiveAlgorithms.Alltoallv(this, values, sendCounts, receiveCounts);
    }

    // ---- Reductions ----

    /// <summary>
    /// Combines every rank's value in rank order at <paramref name="root"/>; default elsewhere (MPI_Reduce; binomial
    /// tree; by node and domain when the communicator spans several).
    /// </summary>
    public T Reduce<T>(T value, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(op);
        return Topology is { } levels
            ? HierarchicalCollectives.Reduce(this, levels, value, op, Checked(root))
            : CollectiveAlgorithms.Reduce(this, value, op, Checked(root));
    }

    /// <summary>Combines arrays element by element at <paramref name="root"/>; null elsewhere (MPI_Reduce on a buffer).</summary>
    public T[]? Reduce<T>(T[] values, ReductionOperation<T> op, int root)
    {
        ArgumentNullException.ThrowIfNull(values);
        return Detached(Topology is { } levels
            ? HierarchicalCollectives.Reduce(this, levels, values, Elementwise.Of(op), Checked(root))
            : CollectiveAlgorithms.Reduce(this, values, Elementwise.Of(op), Checked(root)), values);
    }

    /// <summary>
    /// Combines every rank's value in rank order and returns the result everywhere (MPI_Allreduce; recursive doubling;
    /// by node and domain when the communicator spans several).
    /// </summary>
    public T Allreduce<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return Topology is { } levels ? HierarchicalCollectives.Allreduce(levels, value, op) : CollectiveAlgorithms.Allreduce(this, value, op);
    }

    /// <summary>
    /// Combines arrays element by element and returns the result everywhere (MPI_Allreduce on a buffer); a long array
    /// goes by blocks, a reduce-scatter then an allgather (Rabenseifner).
    /// </summary>
    public T[] Allreduce<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        return Detached(Topology is { } levels
            ? HierarchicalCollectives.Allreduce(levels, values, op)
            : CollectiveAlgorithms.AllreduceElementwise(this, values, op), values);
    }

    /// <summary>The combination of the values of ranks 0..<see cref="Communicator.Rank"/> (MPI_Scan; recursive doubling).</summary>
    public T Scan<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return CollectiveAlgorithms.Scan(this, value, op, inclusive: true);
    }

    /// <summary>Element-wise inclusive scan of arrays (MPI_Scan on a buffer).</summary>
    public T[] Scan<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        return Detached(CollectiveAlgorithms.Scan(this, values, Elementwise.Of(op), inclusive: true), values);
    }

    /// <summary>The combination of the values of ranks 0..<see cref="Communicator.Rank"/> - 1; default on rank 0 (MPI_Exscan).</summary>
    public T ExclusiveScan<T>(T value, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return CollectiveAlgorithms.Scan(this, value, op, inclusive: false);
    }

    /// <summary>Element-wise exclusive scan of arrays; null on rank 0 (MPI_Exscan on a buffer).</summary>
    public T[] ExclusiveScan<T>(T[] values, ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(values);
        return CollectiveAlgorithms.Scan(this, values, Elementwise.Of(op), inclusive: false);
    }

    /// <summary>
    /// Reduces arrays element by element, then gives rank i the i-th block of <paramref name="counts"/>[i] elements
    /// of the result (MPI_Reduce_scatter). <paramref name="counts"/> must be the same on every rank.
    /// </summary>
    public T[] ReduceScatter<T>(T[] values, ReductionOperation<T> op, int[] counts)
    {
        ArgumentNullException.ThrowIfNull(op);
        CheckCounts(counts, nameof(counts));
        CheckLength(values, counts.Sum(), nameof(values));
        var reduced = CollectiveAlgorithms.Reduce(this, values, Elementwise.Of(op), root: 0);
        return CollectiveAlgorithms.Scatterv(this, reduced, 0, counts);
    }

    // ---- MPI.NET's output forms: the result goes into a caller's array, reused when it has the right length ----

    /// <summary>Every rank's value in rank order into <paramref name="outValues"/>, on every rank (MPI_Allgather).</summary>
    public void Allgather<T>(T inValue, ref T[] outValues) => Into(ref outValues, Allgather(inValue));

    /// <summary>Every rank's <paramref name="count"/> elements, concatenated in rank order into <paramref name="outValues"/>.</summary>
    public void AllgatherFlattened<T>(T[] inValues, int count, ref T[] outValues) => Into(ref outValues, AllgatherFlattened(inValues, count));

    /// <summary>Every rank's <paramref name="counts"/>[rank] elements, concatenated in rank order into <paramref name="outValues"/> (MPI_Allgatherv).</summary>
    public void AllgatherFlattened<T>(T[] inValues, int[] counts, ref T[] outValues) => Into(ref outValues, AllgatherFlattened(inValues, counts));

    /// <summary>
    /// Element-wise combination of every rank's array into <paramref name="outValues"/>, on every rank (MPI_Allreduce);
    /// an array of <paramref name="inValues"/>'s length receives the combination with no array allocated, within one
    /// node and domain (<see cref="CollectiveAlgorithms.AllreduceInto"/>).
    /// </summary>
    public void Allreduce<T>(T[] inValues, ReductionOperation<T> op, ref T[] outValues)
    {
        ArgumentNullException.ThrowIfNull(inValues);
        ArgumentNullException.ThrowIfNull(op);
        // MPI.NET's callers pass null to have the array allocated, though the parameter says it is never null.
        if (outValues is null || outValues.Length != inValues.Length || Topology is not null)
        {
            Into(ref outValues!, Allreduce(inValues, op));
            return;
        }
        CollectiveAlgorithms.AllreduceInto(this, inValues, outValues, op);
    }

    /// <summary>What each rank sent here, by rank, into <paramref name="outValues"/> (MPI_Alltoall).</summary>
    public void Alltoall<T>(T[] inValues, ref T[] outValues) => Into(ref outValues, Alltoall(inValues));

    /// <summary>Blocks of <paramref name="count"/> elements to and from each rank, into <paramref name="outValues"/>.</summary>
    public void AlltoallFlattened<T>(T[] inValues, int count, ref T[] outValues) => Into(ref outValues, AlltoallFlattened(inValues, count));

    /// <summary>Blocks of <paramref name="sendCounts"/>[j] elements to each rank j, those received into <paramref name="outValues"/> (MPI_Alltoallv).</summary>
    public void AlltoallFlattened<T>(T[] inValues, int[] sendCounts, int[] recvCounts, ref T[] outValues) =>
        Into(ref outValues, AlltoallFlattened(inValues, sendCounts, recvCounts));

    /// <summary>Element-wise exclusive scan into <paramref name="outValues"/>; rank 0's is left as it was (MPI_Exscan).</summary>
    public void ExclusiveScan<T>(T[] inValues, ReductionOperation<T> op, ref T[] outValues)
    {
        var result = ExclusiveScan(inValues, op);
        if (Rank != 0) Into(ref outValues, result);
    }

    /// <summary>Every rank's value in rank order into the root's <paramref name="outValues"/>; other ranks' are left as they were (MPI_Gather).</summary>
    public void Gather<T>(T inValue, int root, ref T[] outValues) => IntoAtRoot(ref outValues, Gather(inValue, root));

    /// <summary>Arrays of one common length, concatenated in rank order into the root's <paramref name="outValues"/>.</summary>
    public void GatherFlattened<T>(T[] inValues, int root, ref T[] outValues) => IntoAtRoot(ref outValues, GatherFlattened(inValues, root));

    /// <summary>Arrays of <paramref name="counts"/>[rank] elements, concatenated in rank order into the root's <paramref name="outValues"/> (MPI_Gatherv).</summary>
    public void GatherFlattened<T>(T[] inValues, int[] counts, int root, ref T[] outValues) => IntoAtRoot(ref outValues, GatherFlattened(inValues, counts, root));

    /// <summary>Element-wise combination into the root's <paramref name="outValues"/>; other ranks' are left as they were (MPI_Reduce).</summary>
    public void Reduce<T>(T[] inValues, ReductionOperation<T> op, int root, ref T[] outValues) => IntoAtRoot(ref outValues, Reduce(inValues, op, root));

    /// <summary>This rank's block of the element-wise combination into <paramref name="outValues"/> (MPI_Reduce_scatter).</summary>
    public void ReduceScatter<T>(T[] inValues, ReductionOperation<T> op, int[] counts, ref T[] outValues) => Into(ref outValues, ReduceScatter(inValues, op, counts));

    /// <summary>Element-wise inclusive scan into <paramref name="outValues"/> (MPI_Scan).</summary>
    public void Scan<T>(T[] inValues, ReductionOperation<T> op, ref T[] outValues) => Into(ref outValues, Scan(inValues, op));

    /// <summary>Scatter called by the root, which passes the values (MPI.NET's form): returns the root's own element.</summary>
    public T Scatter<T>(T[] values) => Scatter(values, Rank);

    /// <summary>Scatter called by a rank other than <paramref name="root"/> (MPI.NET's form): returns its element.</summary>
    public T Scatter<T>(int root)
    {
        if (Rank == Checked(root))
            throw new MpiException(ErrorClass.InvalidArgument, $"Rank {Rank} is the root of this Scatter: the root passes the values, Scatter(values) or Scatter(values, root).");
        return Scatter<T>(null, root);
    }

    /// <summary>This rank's block of <paramref name="count"/> elements of the root's array, into <paramref name="outValues"/>.</summary>
    public void ScatterFromFlattened<T>(T[]? inValues, int count, int root, ref T[] outValues) => Into(ref outValues, ScatterFromFlattened(inValues, count, root));

    /// <summary>This rank's block of <paramref name="counts"/>[rank] elements of the root's array, into <paramref name="outValues"/> (MPI_Scatterv).</summary>
    public void ScatterFromFlattened<T>(T[]? inValues, int[] counts, int root, ref T[] outValues) => Into(ref outValues, ScatterFromFlattened(inValues, counts, root));

    // ---- New communicators ----

    /// <summary>A communicator with the same members and a new context (MPI_Comm_dup).</summary>
    public Intracommunicator Dup()
    {
        var copy = new Intracommunicator(Runtime, AgreeOnContext(), Members.ToArray(), Rank);
        copy.Attributes.CopyFrom(Attributes);
        return copy;
    }

    /// <summary>The same as <see cref="Dup"/> (MPI.NET's name).</summary>
    public override Intracommunicator Clone() => Dup();

    /// <summary>
    /// Partitions the members by <paramref name="color"/>, each part ordered by <paramref name="key"/> then old rank
    /// (MPI_Comm_split). A rank passing <see cref="Undefined"/> gets null.
    /// </summary>
    public Intracommunicator? Split(int color, int key)
    {
        if (color < 0 && color != Undefined)
            throw new MpiException(ErrorClass.InvalidArgument, $"Color {color} is invalid: colors are non-negative, or Undefined.");
        var choices = Allgather((color, key));
        int context = AgreeOnContext();
        if (color == Undefined) return null;
        var part = Enumerable.Range(0, Size).Where(r => choices[r].color == color).OrderBy(r => choices[r].key).ThenBy(r => r).ToArray();
        var members = Members.ToArray();
        return new Intracommunicator(Runtime, context, part.Select(r => members[r]).ToArray(), Array.IndexOf(part, Rank));
    }

    /// <summary>A communicator of <paramref name="group"/>'s members, a subset of this one's; null on other ranks (MPI_Comm_create).</summary>
    public Intracommunicator? Create(Group group)
    {
        ArgumentNullException.ThrowIfNull(group);
        var members = Members.ToArray();
        foreach (var member in group.Members)
            if (Array.IndexOf(members, member) < 0)
                throw new MpiException(ErrorClass.InvalidArgument, $"The group holds world rank {member}, which is not in this communicator.");
        int context = AgreeOnContext();
        int rank = group.Members.IndexOf(members[Rank]);
        return rank < 0 ? null : new Intracommunicator(Runtime, context, group.Members.ToArray(), rank);
    }

    /// <summary>
    /// Starts <paramref name="maxprocs"/> ranks of <paramref name="command"/> with <paramref name="argv"/> as a world
    /// of their own (MPI_Comm_spawn; collective over this communicator, and only the root's arguments count) and
    /// returns the intercommunicator to them, whose other side is their <see cref="Communicator.Parent"/>. They run
    /// on the root's node, in its current directory, with its group's environment; a relative
    /// <paramref name="command"/> is looked for there, then beside the root's program. Returns once they have all
    /// started and linked.
    /// </summary>
    /// <exception cref="MpiException">
    /// Spawn, on every rank of this communicator: the program is not found, the ranks could not start, or this rank
    /// was not launched by an agent (an in-process job or a singleton cannot spawn).
    /// </exception>
    public Intercommunicator Spawn(string command, string[]? argv, int maxprocs, int root)
    {
        CheckRank(root, nameof(root));
        var local = Dup();
        int context = local.AgreeOnContext();
        // The root's outcome goes to every rank, so a failure is the same exception everywhere rather than a hang.
        string failure = "";
        byte[] reply = [];
        if (Rank == root)
        {
            try
            {
                reply = SpawnAtRoot(command, argv ?? [], maxprocs, context).ToByteArray();
            }
            catch (MpiException e)
            {
                failure = e.Message;
            }
        }
        local.Broadcast(ref failure, root);
        if (failure.Length > 0) throw new MpiException(ErrorClass.Spawn, failure);
        local.Broadcast(ref reply, root);
        var table = RankTable.Parser.ParseFrom(reply);
        Runtime.Spawner!.Connect(table);
        Runtime.RefreshLinks();
        // The spawned ranks start only once every rank here can take their streams (and has mapped their memory).
        local.Barrier();
        if (Rank == root) Runtime.Spawner.Release(table.Spawned.First);
        int[] spawned = [.. Enumerable.Range(table.Spawned.First, table.Spawned.Size)];
        Runtime.Connected.Add(new Intercommunicator(local, context, spawned));
        return new Intercommunicator(local, context, spawned);
    }

    private RankTable SpawnAtRoot(string command, string[] argv, int maxprocs, int context)
    {
        var spawner = Runtime.Spawner ?? throw new MpiException(ErrorClass.Spawn,
            $"Spawn needs a rank launched by an agent (pmpi run); rank {Rank} is a thread of an in-process job, a singleton or a rank that mpiexec or srun started, which has no master to start ranks.");
        if (maxprocs < 1) throw new MpiException(ErrorClass.Spawn, $"Spawn was asked for {maxprocs} ranks of '{command}'; it starts at least one.");
        ArgumentException.ThrowIfNullOrEmpty(command);
        string directory = System.Environment.CurrentDirectory;
        string[] candidates = Path.IsPathRooted(command) ? [command] : [Path.GetFullPath(command, directory), Path.GetFullPath(command, AppContext.BaseDirectory)];
        var program = candidates.FirstOrDefault(File.Exists)
            ?? throw new MpiException(ErrorClass.Spawn, $"Spawn's program '{command}' was not found (looked for {string.Join(" and ", candidates)}).");
        var request = new SpawnRequest { Program = program, Count = maxprocs, WorkingDirectory = directory, Context = context };
        request.Arguments.AddRange(argv);
        request.Parents.AddRange(Members.ToArray());
        return spawner.Spawn(request);
    }

    // New communicators take the highest context id any member has free, so it is free on all of them.
    internal int AgreeOnContext() => CollectiveAlgorithms.Allreduce(this, Runtime.NextFreeContext, Math.Max);

    private int[] Ones => Enumerable.Repeat(1, Size).ToArray();

    private int Checked(int root)
    {
        CheckRank(root, nameof(root));
        return root;
    }

    private void CheckCounts(int[] counts, string argument)
    {
        ArgumentNullException.ThrowIfNull(counts, argument);
        if (counts.Length != Size || counts.Any(c => c < 0))
            throw new MpiException(ErrorClass.InvalidCount, $"'{argument}' must hold {Size} non-negative counts, one per rank; it holds [{string.Join(", ", counts)}].");
    }

    private static void CheckLength<T>(T[]? values, int expected, string argument)
    {
        ArgumentNullException.ThrowIfNull(values, argument);
        if (values.Length != expected)
            throw new MpiException(ErrorClass.InvalidCount, $"'{argument}' must hold {expected} elements; it holds {values.Length}.");
    }

    // MPI.NET fills the caller's array when it has the result's length and replaces it otherwise.
    internal static void Into<T>(ref T[] outValues, T[] result)
    {
        if (outValues is not null && outValues.Length == result.Length && !ReferenceEquals(outValues, result)) result.CopyTo(outValues, 0);
        else outValues = result;
    }

    internal static void IntoAtRoot<T>(ref T[] outValues, T[]? result)
    {
        if (result is not null) Into(ref outValues, result);
    }

    // A rank that combined nothing (one rank, or rank 0 of a scan) gets its input back from the algorithm; as a receive
    // buffer the result must not alias the send buffer, or a later write to the input would change it, at some sizes only.
    [return: NotNullIfNotNull(nameof(result))]
    private static T[]? Detached<T>(T[]? result, T[] input) => ReferenceEquals(result, input) ? [.. input] : result;

    /// <summary>What this communicator's collectives decided when it was made; a call compares only its message with it.</summary>
    internal CollectiveSelection Collectives { get; }

    /// <summary>How this communicator's members sit on nodes and domains; null when one level is all there is.</summary>
    internal CommunicatorTopology? Topology => Collectives.Topology;

    private T BroadcastValue<T>(T value, int root) =>
        Topology is { } levels ? HierarchicalCollectives.Broadcast(this, levels, value, root, CollectiveAlgorithms.Broadcast) : CollectiveAlgorithms.Broadcast(this, value, root);

}
