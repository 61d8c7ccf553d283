namespace Pmpi.FSharp

open System
open System.Threading.Tasks
open Pmpi

/// <summary>
/// PMPI for F#: functions that take the communicator last, so they pipe (<c>world |> Mpi.send 1 7 data</c>);
/// reductions from any F# function or operator (<c>Mpi.allreduce (+) x world</c>); options where a result exists on
/// some ranks only; Task and Async forms of the non-blocking operations. Values of any type travel: primitives and
/// arrays of them as raw bytes, everything else (records, tuples, unions, lists, ...) through
/// <see cref="T:Pmpi.FSharp.FSharpPayloadSerializer"/>.
/// </summary>
[<RequireQualifiedAccess>]
module Mpi =

    /// <summary>Matches a message from any source (MPI_ANY_SOURCE).</summary>
    [<Literal>]
    let anySource = Communicator.AnySource

    /// <summary>Matches a message with any tag (MPI_ANY_TAG).</summary>
    [<Literal>]
    let anyTag = Communicator.AnyTag

    // Each closure type's two-argument Invoke, which F# compiles (+), max or fun a b -> ... into.
    let private invokers = System.Collections.Concurrent.ConcurrentDictionary<Type, Reflection.MethodInfo>()

    /// The delegate of the closure's own two-argument Invoke, not of a lambda around it: Pmpi.Core reads that
    /// method to know (+) on floats for MPI_SUM, as a C# rank's Operation<double>.Add, so both take one algorithm.
    let private operation (op: 'T -> 'T -> 'T) =
        let adapted = OptimizedClosures.FSharpFunc<_, _, _>.Adapt op
        let invoke = invokers.GetOrAdd(adapted.GetType(), fun closure -> nonNull (closure.GetMethod("Invoke", [| typeof<'T>; typeof<'T> |])))
        Delegate.CreateDelegate(typeof<ReductionOperation<'T>>, adapted, invoke) :?> ReductionOperation<'T>

    let private someAt root (comm: Communicator) value = if comm.Rank = root then Some value else None

    // ---- Running ----

    /// <summary>
    /// Runs <paramref name="body"/> on every rank with the arguments left once PMPI's own are removed: one rank when
    /// launched by <c>pmpi run</c>, else <c>--pmpi-ranks N</c> (or PMPI_RANKS) threads of this process. Returns what
    /// <paramref name="body"/> returned on this process's rank (the lowest one's, when the ranks are threads here),
    /// so <c>main</c> can return it as the exit code: <c>Mpi.run argv (fun world args -> ...; 0)</c>.
    /// </summary>
    /// <exception cref="T:Pmpi.MpiException">A rank failed or aborted; the message names it.</exception>
    let run (argv: string[]) (body: Intracommunicator -> string[] -> 'R) : 'R =
        let mutable args = argv
        let results = System.Collections.Concurrent.ConcurrentDictionary<int, 'R>()
        Environment.Run(&args, Action<Intracommunicator>(fun world -> results[world.Rank] <- body world args), FSharpPayloadSerializer.Options())
        (results |> Seq.minBy (fun result -> result.Key)).Value

    /// <summary>Runs <paramref name="body"/> on <paramref name="ranks"/> in-process ranks, aborting them after <paramref name="timeout"/>.</summary>
    /// <exception cref="T:System.TimeoutException">The job ran past <paramref name="timeout"/>.</exception>
    let runRanks (ranks: int) (timeout: TimeSpan) (body: Intracommunicator -> unit) =
        Environment.Run(ranks, Action<_>(body), FSharpPayloadSerializer.Options timeout)

    /// <summary>The calling rank's rank in <paramref name="comm"/>.</summary>
    let rank (comm: Communicator) = comm.Rank

    /// <summary>The number of ranks in <paramref name="comm"/>.</summary>
    let size (comm: Communicator) = comm.Size

    /// <summary>Wall-clock seconds since an arbitrary origin (MPI_Wtime).</summary>
    let time () = Environment.Time

    /// <summary>Aborts every rank of the job with <paramref name="code"/> (MPI_Abort); never returns.</summary>
    let abort code (comm: Communicator) : 'T =
        comm.Abort code
        Unchecked.defaultof<'T>

    // ---- Point-to-point ----

    /// <summary>Sends <paramref name="value"/> to rank <paramref name="dest"/> with <paramref name="tag"/> (MPI_Send).</summary>
    let send dest tag (value: 'T) (comm: Communicator) = comm.Send<'T>(value, dest, tag)

    /// <summary>Sends and returns once the receiver has matched the message (MPI_Ssend).</summary>
    let ssend dest tag (value: 'T) (comm: Communicator) = comm.Ssend<'T>(value, dest, tag)

    /// <summary>Receives a <typeparamref name="T"/> from <paramref name="source"/> (or <c>Mpi.anySource</c>) with <paramref name="tag"/> (or <c>Mpi.anyTag</c>).</summary>
    let recv<'T> source tag (comm: Communicator) : 'T = comm.Receive<'T>(source, tag)

    /// <summary>Receives a value and the message's status (source, tag, count).</summary>
    let recvWithStatus<'T> source tag (comm: Communicator) : 'T * CompletedStatus =
        let mutable value = Unchecked.defaultof<'T>
        let mutable status = Unchecked.defaultof<CompletedStatus>
        comm.Receive<'T>(source, tag, &value, &status)
        value, status

    /// <summary>Receives an array into <paramref name="buffer"/> and returns how many elements arrived; a longer message throws a Truncate error.</summary>
    let recvInto source tag (buffer: 'T[]) (comm: Communicator) =
        let mutable target = buffer
        let mutable status = Unchecked.defaultof<CompletedStatus>
        comm.Receive<'T>(source, tag, &target, &status)
        status.Count()

    /// <summary>Sends <paramref name="value"/> to <paramref name="partner"/> and returns what it sent back with the same tag (MPI_Sendrecv).</summary>
    let exchange partner tag (value: 'T) (comm: Communicator) : 'T = comm.SendReceive<'T>(value, partner, tag)

    /// <summary>Waits for a matching message without receiving it (MPI_Probe).</summary>
    let probe source tag (comm: Communicator) = comm.Probe(source, tag)

    /// <summary>The status of a matching message if one has arrived, else None (MPI_Iprobe).</summary>
    let tryProbe source tag (comm: Communicator) = comm.ImmediateProbe(source, tag) |> Option.ofObj

    /// <summary>
    /// Waits for a matching message and takes it out of matching, so no other thread's receive takes it; receive it
    /// with <c>Mpi.receiveMatched</c> (MPI_Mprobe).
    /// </summary>
    let matchedProbe source tag (comm: Communicator) = comm.MatchedProbe(source, tag)

    /// <summary>The same if a matching message has arrived, else None at once (MPI_Improbe).</summary>
    let tryMatchedProbe source tag (comm: Communicator) = comm.ImmediateMatchedProbe(source, tag) |> Option.ofObj

    /// <summary>Receives the message a matched probe took (MPI_Mrecv).</summary>
    let receiveMatched<'T> (message: MatchedMessage) : 'T = message.Receive<'T>()

    // ---- Non-blocking ----

    /// <summary>Starts a send (MPI_Isend) and returns a task that completes with it; <paramref name="value"/> must not change until then.</summary>
    let sendTask dest tag (value: 'T) (comm: Communicator) : Task =
        comm.ImmediateSend<'T>(value, dest, tag).WaitAsync()

    /// <summary>A task that completes with the next matching message's value (MPI_Irecv), without blocking a thread.</summary>
    let recvTask<'T> source tag (comm: Communicator) : Task<'T> = comm.ReceiveAsync<'T>(source, tag)

    /// <summary>The Async form of <c>sendTask</c>: starts the send when the workflow runs.</summary>
    let sendAsync dest tag (value: 'T) (comm: Communicator) : Async<unit> =
        async {
            let! token = Async.CancellationToken
            do! comm.ImmediateSend<'T>(value, dest, tag).WaitAsync(token) |> Async.AwaitTask |> Async.Ignore
        }

    /// <summary>A task that completes with the next matching message's value and its status (source, tag, count).</summary>
    let recvWithStatusTask<'T> source tag (comm: Communicator) : Task<'T * CompletedStatus> =
        let request = comm.ImmediateReceive<'T>(source, tag)
        task {
            let! status = request.WaitAsync()
            return request.Value, status
        }

    /// <summary>The Async form of <c>recvWithStatusTask</c>; cancelling the workflow cancels the receive.</summary>
    let recvWithStatusAsync<'T> source tag (comm: Communicator) : Async<'T * CompletedStatus> =
        async {
            let! token = Async.CancellationToken
            let request = comm.ImmediateReceive<'T>(source, tag)
            use _ = token.Register(fun () -> request.Cancel())
            let! status = request.WaitAsync() |> Async.AwaitTask
            if status.Cancelled then raise (OperationCanceledException token)
            return request.Value, status
        }

    /// <summary>The Async form of <c>recvTask</c>; cancelling the workflow cancels the receive.</summary>
    let recvAsync<'T> source tag (comm: Communicator) : Async<'T> =
        async {
            let! token = Async.CancellationToken
            return! comm.ReceiveAsync<'T>(source, tag, token) |> Async.AwaitTask
        }

    // ---- Collectives ----

    /// <summary>Returns once every rank has called it (MPI_Barrier).</summary>
    let barrier (comm: Intracommunicator) = comm.Barrier()

    /// <summary>The root's <paramref name="value"/>, on every rank (MPI_Bcast); other ranks' values are ignored.</summary>
    let broadcast root (value: 'T) (comm: Intracommunicator) : 'T =
        let mutable shared = value
        comm.Broadcast<'T>(&shared, root)
        shared

    /// <summary>
    /// The root's value on every rank (MPI_Bcast), given only at the root: <c>Some value</c> there, <c>None</c> elsewhere.
    /// An array goes as <c>broadcastInto</c>'s does, by blocks between nodes when it is large.
    /// </summary>
    let broadcastFrom root (value: 'T option) (comm: Intracommunicator) : 'T =
        if comm.Rank = root && value.IsNone then
            raise (MpiException(ErrorClass.InvalidArgument, $"Mpi.broadcastFrom: the root, rank {root}, passed None; the root passes Some value."))
        let mutable shared = Option.defaultValue Unchecked.defaultof<'T> value
        comm.Broadcast<'T>(&shared, root)
        shared

    /// <summary>
    /// Fills every rank's <paramref name="values"/> with the root's, in place (MPI_Bcast into a buffer): nothing is
    /// allocated, and a large array goes by blocks between nodes. Every rank's array has the root's length.
    /// </summary>
    let broadcastInto root (values: 'T[]) (comm: Intracommunicator) : unit =
        let mutable target = values
        comm.Broadcast<'T>(&target, root)
        if not (obj.ReferenceEquals(target, values)) then
            raise (MpiException(ErrorClass.InvalidCount, $"Mpi.broadcastInto: rank {comm.Rank}'s array holds {values.Length} elements; the root's, rank {root}'s, {target.Length}."))

    /// <summary>Every rank's value combined by <paramref name="op"/> in rank order: Some at <paramref name="root"/>, None elsewhere (MPI_Reduce).</summary>
    let reduce root (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) =
        comm.Reduce<'T>(value, operation op, root) |> someAt root comm

    /// <summary>Every rank's value combined by <paramref name="op"/> in rank order, on every rank (MPI_Allreduce).</summary>
    let allreduce (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) = comm.Allreduce<'T>(value, operation op)

    /// <summary>Arrays combined element by element: Some at <paramref name="root"/>, None elsewhere (MPI_Reduce on a buffer).</summary>
    let reduceArray root (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) =
        comm.Reduce<'T>(values, operation op, root) |> Option.ofObj

    /// <summary>Arrays combined element by element, on every rank (MPI_Allreduce on a buffer).</summary>
    let allreduceArray (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) = comm.Allreduce<'T>(values, operation op)

    /// <summary>The combination of the values of ranks 0 to this one (MPI_Scan).</summary>
    let scan (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) = comm.Scan<'T>(value, operation op)

    /// <summary>The combination of the values of ranks 0 to this one's predecessor; None on rank 0 (MPI_Exscan).</summary>
    let exscan (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) =
        let combined = comm.ExclusiveScan<'T>(value, operation op)
        if comm.Rank = 0 then None else Some combined

    /// <summary>Every rank's value in rank order: Some at <paramref name="root"/>, None elsewhere (MPI_Gather).</summary>
    let gather root (value: 'T) (comm: Intracommunicator) = comm.Gather<'T>(value, root) |> Option.ofObj

    /// <summary>Every rank's value in rank order, on every rank (MPI_Allgather).</summary>
    let allgather (value: 'T) (comm: Intracommunicator) = comm.Allgather<'T>(value)

    /// <summary>Element <c>rank</c> of the root's <paramref name="values"/> (one per rank), on every rank (MPI_Scatter); other ranks pass <c>[||]</c>.</summary>
    let scatter root (values: 'T[]) (comm: Intracommunicator) : 'T = comm.Scatter<'T>(values, root)

    /// <summary>Element <c>rank</c> of the root's values (one per rank), given only at the root: <c>Some values</c> there, <c>None</c> elsewhere (MPI_Scatter).</summary>
    let scatterFrom root (values: 'T[] option) (comm: Intracommunicator) : 'T =
        comm.Scatter<'T>(Option.defaultValue Unchecked.defaultof<'T[]> values, root)

    /// <summary>Element <c>j</c> of each rank's <paramref name="values"/> (one per rank) goes to rank <c>j</c>; gives what each rank sent here, by rank (MPI_Alltoall).</summary>
    let alltoall (values: 'T[]) (comm: Intracommunicator) : 'T[] = comm.Alltoall<'T>(values)

    // ---- The v-forms: blocks of a length per rank ----

    /// <summary>Every rank's array concatenated in rank order: Some at <paramref name="root"/>, None elsewhere (MPI_Gatherv). <paramref name="counts"/> (each rank's length) matters at the root only.</summary>
    let gatherv root (counts: int[]) (values: 'T[]) (comm: Intracommunicator) = comm.GatherFlattened<'T>(values, counts, root) |> Option.ofObj

    /// <summary>Every rank's array concatenated in rank order, on every rank (MPI_Allgatherv); <paramref name="counts"/> is each rank's length.</summary>
    let allgatherv (counts: int[]) (values: 'T[]) (comm: Intracommunicator) : 'T[] = comm.AllgatherFlattened<'T>(values, counts)

    /// <summary>Block <c>rank</c> of the root's array cut into blocks of <paramref name="counts"/>, on every rank (MPI_Scatterv); the array is given only at the root.</summary>
    let scatterv root (counts: int[]) (values: 'T[] option) (comm: Intracommunicator) : 'T[] =
        comm.ScatterFromFlattened<'T>(Option.defaultValue Unchecked.defaultof<'T[]> values, counts, root)

    /// <summary>Each rank sends <c>sendCounts[j]</c> elements to rank <c>j</c> and receives <c>receiveCounts[i]</c> from rank <c>i</c>, concatenated in rank order (MPI_Alltoallv).</summary>
    let alltoallv (sendCounts: int[]) (receiveCounts: int[]) (values: 'T[]) (comm: Intracommunicator) : 'T[] =
        comm.AlltoallFlattened<'T>(values, sendCounts, receiveCounts)

    /// <summary>
    /// Partitions the ranks by <paramref name="color"/>, ordered by <paramref name="key"/> (MPI_Comm_split): the new
    /// communicator, or None for a negative color (this rank joins none).
    /// </summary>
    let split color key (comm: Intracommunicator) =
        comm.Split((if color < 0 then Intracommunicator.Undefined else color), key) |> Option.ofObj

    /// <summary>A communicator of the same ranks whose messages never meet <paramref name="comm"/>'s (MPI_Comm_dup).</summary>
    let dup (comm: Intracommunicator) = comm.Dup()

    // ---- Topologies ----

    /// <summary>
    /// The ranks of <paramref name="comm"/> as a grid of <paramref name="dims"/> (periodic where <paramref name="periods"/>
    /// says so; <c>reorder</c> lets PMPI renumber them), MPI_Cart_create.
    /// </summary>
    let cartesian (dims: int[]) (periods: bool[]) reorder (comm: Intracommunicator) = new CartesianCommunicator(comm, dims.Length, dims, periods, reorder)

    /// <summary>This rank's coordinates in the grid (MPI_Cart_coords).</summary>
    let coordinates (grid: CartesianCommunicator) = grid.Coordinates

    /// <summary>The ranks <paramref name="displacement"/> steps below and above this one along <paramref name="direction"/>: (source, dest), as MPI_Cart_shift gives them.</summary>
    let shift direction displacement (grid: CartesianCommunicator) =
        let mutable source = 0
        let mutable dest = 0
        grid.Shift(direction, displacement, &source, &dest)
        source, dest

    /// <summary>The ranks of <paramref name="comm"/> as a graph: <c>edges[i]</c> are rank i's neighbours (MPI_Graph_create).</summary>
    let graph (edges: int[][]) reorder (comm: Intracommunicator) = new GraphCommunicator(comm, edges, reorder)

    /// <summary>The neighbours of this rank in a grid or a graph (MPI_Graph_neighbors, a grid's adjacent ranks).</summary>
    let neighbors (topology: TopologicalCommunicator) = topology.NeighborsOf topology.Rank
