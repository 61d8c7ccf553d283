namespace Pmpi.FSharp

open System
open System.Threading.Tasks
open Pmpi

/// <summary>
/// A nonblocking collective started by one of the <c>Mpi.i*</c> functions (MPI_Iallreduce, ...): it progresses while
/// the rank computes, and <c>Value</c> is what the blocking function of the same name returns, an option where that
/// is one. Pmpi.Core's own request, whose value would be a default where F# has None, is <c>Request</c>.
/// </summary>
[<Sealed>]
type PendingCollective<'T> internal (request: Request, result: unit -> 'T) =

    /// <summary>Pmpi.Core's request, to put in a <see cref="T:Pmpi.RequestList"/> or wait for as a task.</summary>
    member _.Request = request

    /// <summary>Whether the collective has completed (MPI_Test); never blocks, and throws the collective's error if it failed.</summary>
    member _.IsCompleted = not (isNull (request.Test()))

    /// <summary>The collective's result; waits for it first (MPI_Wait).</summary>
    member _.Value = result ()

/// <summary>
/// PMPI for F#: functions that take the communicator last, so they pipe (<c>world |> Mpi.send 1 7 data</c>);
/// reductions from any F# function or operator (<c>Mpi.allreduce (+) x world</c>); options where a result exists on
/// some ranks only; Task and Async forms of the non-blocking operations; nonblocking (<c>Mpi.iallreduce</c>),
/// persistent (<c>Mpi.allreduceInit</c>) and neighbourhood (<c>Mpi.neighborAlltoall</c>) collectives. Values of any
/// type travel: primitives and arrays of them as raw bytes, everything else (records, tuples, unions, lists, ...)
/// through <see cref="T:Pmpi.FSharp.FSharpPayloadSerializer"/>.
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

    /// Core's request, seen through the result F# gives for its blocking form.
    let private pending (request: CollectiveRequest<'R>) (result: 'R -> 'T) = PendingCollective(request, fun () -> result request.Value)

    /// Raises unless the broadcast filled the caller's own array, which it does when its length is the root's.
    let private filledInPlace caller root (values: 'T[]) (received: 'T[]) (comm: Intracommunicator) =
        if not (obj.ReferenceEquals(received, values)) then
            raise (MpiException(ErrorClass.InvalidCount, $"{caller}: rank {comm.Rank}'s array holds {values.Length} elements; the root's, rank {root}'s, {received.Length}."))

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

    /// Awaits a task, raising the operation's own error (an MpiException naming rank and tag) rather than the
    /// AggregateException that Async.AwaitTask wraps it in.
    let private awaitOwnError (task: Task<'T>) : Async<'T> =
        async {
            try
                return! Async.AwaitTask task
            with :? AggregateException as wrapped when wrapped.InnerExceptions.Count = 1 ->
                Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(wrapped.InnerExceptions[0]).Throw()
                return Unchecked.defaultof<'T>
        }

    /// <summary>The Async form of <c>sendTask</c>: starts the send when the workflow runs.</summary>
    let sendAsync dest tag (value: 'T) (comm: Communicator) : Async<unit> =
        async {
            let! token = Async.CancellationToken
            do! comm.ImmediateSend<'T>(value, dest, tag).WaitAsync(token) |> awaitOwnError |> Async.Ignore
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
            let! status = request.WaitAsync() |> awaitOwnError
            if status.Cancelled then raise (OperationCanceledException token)
            return request.Value, status
        }

    /// <summary>The Async form of <c>recvTask</c>; cancelling the workflow cancels the receive.</summary>
    let recvAsync<'T> source tag (comm: Communicator) : Async<'T> =
        async {
            let! token = Async.CancellationToken
            return! comm.ReceiveAsync<'T>(source, tag, token) |> awaitOwnError
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
        filledInPlace "Mpi.broadcastInto" root values target comm

    /// <summary>Every rank's value combined by <paramref name="op"/> in rank order: Some at <paramref name="root"/>, None elsewhere (MPI_Reduce).</summary>
    let reduce root (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) =
        comm.Reduce<'T>(value, operation op, root) |> someAt root comm

    /// <summary>Every rank's value combined by <paramref name="op"/> in rank order, on every rank (MPI_Allreduce).</summary>
    let allreduce (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) = comm.Allreduce<'T>(value, operation op)

    /// <summary>Arrays combined element by element: Some at <paramref name="root"/>, None elsewhere (MPI_Reduce on a buffer).</summary>
    let reduceArray root (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) =
        comm.Reduce<'T>(values, operation op, root) |> Option.ofObj

    /// <summary>Arrays combined element by element, on every rank (MPI_Allreduce on a buffer), in a new array; in a loop over large arrays, <c>allreduceInto</c>.</summary>
    let allreduceArray (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) = comm.Allreduce<'T>(values, operation op)

    /// <summary>
    /// Arrays combined element by element into <paramref name="result"/>, on every rank (MPI_Allreduce into a buffer):
    /// nothing is allocated. A new array of 100 KB or more each call, as <c>allreduceArray</c> returns, costs a loop
    /// more than the reduction itself: .NET collects such arrays in full collections and gives their memory back, so
    /// every call's array is paged in afresh. <paramref name="result"/> has <paramref name="values"/>' length, or is
    /// <paramref name="values"/> itself (in place).
    /// </summary>
    let allreduceInto (op: 'T -> 'T -> 'T) (values: 'T[]) (result: 'T[]) (comm: Intracommunicator) : unit =
        if result.Length <> values.Length then
            raise (MpiException(ErrorClass.InvalidCount, $"Mpi.allreduceInto: rank {comm.Rank}'s result array holds {result.Length} elements; its values, {values.Length}."))
        let mutable target = result
        comm.Allreduce<'T>(values, operation op, &target)

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

    // ---- Nonblocking collectives: each starts at once, in the order the program calls them, and runs while the rank computes ----

    /// <summary>Starts a barrier (MPI_Ibarrier): completes once every rank has started it.</summary>
    let ibarrier (comm: Intracommunicator) = pending (comm.ImmediateBarrier()) ignore

    /// <summary>Starts a broadcast of the root's <paramref name="value"/> (MPI_Ibcast); other ranks' values are ignored.</summary>
    let ibroadcast root (value: 'T) (comm: Intracommunicator) = pending (comm.ImmediateBroadcast<'T>(value, root)) id

    /// <summary>Starts filling every rank's <paramref name="values"/> with the root's, in place, as <c>broadcastInto</c> does (MPI_Ibcast into a buffer).</summary>
    let ibroadcastInto root (values: 'T[]) (comm: Intracommunicator) =
        pending (comm.ImmediateBroadcast<'T>(values, root)) (fun received -> filledInPlace "Mpi.ibroadcastInto" root values received comm)

    /// <summary>Starts a reduction by <paramref name="op"/> to <paramref name="root"/> (MPI_Ireduce): Some there, None elsewhere.</summary>
    let ireduce root (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) =
        pending (comm.ImmediateReduce<'T>(value, operation op, root)) (someAt root comm)

    /// <summary>Starts a reduction on every rank (MPI_Iallreduce).</summary>
    let iallreduce (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) = pending (comm.ImmediateAllreduce<'T>(value, operation op)) id

    /// <summary>Starts combining arrays element by element at <paramref name="root"/> (MPI_Ireduce on a buffer): Some there, None elsewhere.</summary>
    let ireduceArray root (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) =
        pending (comm.ImmediateReduce<'T>(values, operation op, root)) Option.ofObj

    /// <summary>Starts combining arrays element by element on every rank, by blocks when long (MPI_Iallreduce on a buffer).</summary>
    let iallreduceArray (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) = pending (comm.ImmediateAllreduce<'T>(values, operation op)) id

    /// <summary>Starts combining arrays element by element into <paramref name="result"/>, as <c>allreduceInto</c> does (MPI_Iallreduce with a receive buffer).</summary>
    let iallreduceInto (op: 'T -> 'T -> 'T) (values: 'T[]) (result: 'T[]) (comm: Intracommunicator) =
        pending (comm.ImmediateAllreduce<'T>(values, operation op, result)) ignore

    /// <summary>Starts an inclusive scan (MPI_Iscan).</summary>
    let iscan (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) = pending (comm.ImmediateScan<'T>(value, operation op)) id

    /// <summary>Starts an exclusive scan (MPI_Iexscan): None on rank 0.</summary>
    let iexscan (op: 'T -> 'T -> 'T) (value: 'T) (comm: Intracommunicator) =
        pending (comm.ImmediateExclusiveScan<'T>(value, operation op)) (fun combined -> if comm.Rank = 0 then None else Some combined)

    /// <summary>Starts a gather to <paramref name="root"/> (MPI_Igather): Some there, None elsewhere.</summary>
    let igather root (value: 'T) (comm: Intracommunicator) = pending (comm.ImmediateGather<'T>(value, root)) Option.ofObj

    /// <summary>Starts an allgather (MPI_Iallgather).</summary>
    let iallgather (value: 'T) (comm: Intracommunicator) = pending (comm.ImmediateAllgather<'T>(value)) id

    /// <summary>Starts a scatter of the root's <paramref name="values"/>, one per rank (MPI_Iscatter); other ranks pass <c>[||]</c>.</summary>
    let iscatter root (values: 'T[]) (comm: Intracommunicator) = pending (comm.ImmediateScatter<'T>(values, root)) id

    /// <summary>Starts an all-to-all exchange, element <c>j</c> to rank <c>j</c> (MPI_Ialltoall).</summary>
    let ialltoall (values: 'T[]) (comm: Intracommunicator) = pending (comm.ImmediateAlltoall<'T>(values)) id

    /// <summary>Starts <c>gatherv</c> (MPI_Igatherv): Some at <paramref name="root"/>, None elsewhere.</summary>
    let igatherv root (counts: int[]) (values: 'T[]) (comm: Intracommunicator) =
        pending (comm.ImmediateGatherFlattened<'T>(values, counts, root)) Option.ofObj

    /// <summary>Starts <c>allgatherv</c> (MPI_Iallgatherv).</summary>
    let iallgatherv (counts: int[]) (values: 'T[]) (comm: Intracommunicator) = pending (comm.ImmediateAllgatherFlattened<'T>(values, counts)) id

    /// <summary>Starts <c>scatterv</c> (MPI_Iscatterv); the array is given only at the root.</summary>
    let iscatterv root (counts: int[]) (values: 'T[] option) (comm: Intracommunicator) =
        pending (comm.ImmediateScatterFromFlattened<'T>(Option.defaultValue Unchecked.defaultof<'T[]> values, counts, root)) id

    /// <summary>Starts <c>alltoallv</c> (MPI_Ialltoallv).</summary>
    let ialltoallv (sendCounts: int[]) (receiveCounts: int[]) (values: 'T[]) (comm: Intracommunicator) =
        pending (comm.ImmediateAlltoallFlattened<'T>(values, sendCounts, receiveCounts)) id

    /// <summary>
    /// Waits for a started collective without blocking a thread: <c>let! sum = world |> Mpi.iallreduce (+) x |> Mpi.await</c>.
    /// Cancelling the workflow stops the wait, not the collective, which MPI cannot cancel.
    /// </summary>
    let await (collective: PendingCollective<'T>) : Async<'T> =
        async {
            let! token = Async.CancellationToken
            // A failure is left for Value, which throws the collective's error as it was raised, where AwaitTask would
            // wrap it in an AggregateException.
            do! collective.Request.WaitAsync(token) |> Async.AwaitTask |> Async.Catch |> Async.Ignore
            return collective.Value
        }

    // ---- Persistent requests: bound to their arguments once and started again and again, each start reading the arrays as they are then ----

    /// <summary>A send of <paramref name="value"/> to <paramref name="dest"/> with <paramref name="tag"/> (MPI_Send_init); an array is sent as it is at each start.</summary>
    let sendInit dest tag (value: 'T) (comm: Communicator) = comm.PersistentSend<'T>(value, dest, tag)

    /// <summary>A receive from <paramref name="source"/> with <paramref name="tag"/> (MPI_Recv_init); its <c>Value</c> is the last round's.</summary>
    let recvInit<'T> source tag (comm: Communicator) : PersistentRequest<'T> = comm.PersistentReceive<'T>(source, tag)

    /// <summary>A receive into <paramref name="buffer"/>, as <c>recvInto</c> does, at each start (MPI_Recv_init on a buffer).</summary>
    let recvIntoInit source tag (buffer: 'T[]) (comm: Communicator) = comm.PersistentReceive<'T>(source, tag, buffer)

    /// <summary>A barrier (MPI_Barrier_init).</summary>
    let barrierInit (comm: Intracommunicator) = comm.PersistentBarrier()

    /// <summary>Fills every rank's <paramref name="values"/> with the root's, in place, at each start (MPI_Bcast_init); every rank's array has the root's length.</summary>
    let broadcastInit root (values: 'T[]) (comm: Intracommunicator) = comm.PersistentBroadcast<'T>(values, root)

    /// <summary>
    /// Combines arrays element by element at <paramref name="root"/> (MPI_Reduce_init). <c>Value</c> is Pmpi.Core's:
    /// the root's result, which each round fills again, and null elsewhere (<c>Option.ofObj</c> makes it an option).
    /// </summary>
    let reduceInit root (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) = comm.PersistentReduce<'T>(values, operation op, root)

    /// <summary>Combines arrays element by element on every rank (MPI_Allreduce_init); each round fills the same result array.</summary>
    let allreduceInit (op: 'T -> 'T -> 'T) (values: 'T[]) (comm: Intracommunicator) = comm.PersistentAllreduce<'T>(values, operation op)

    /// <summary>Concatenates every rank's <paramref name="values"/>, of one length, at <paramref name="root"/> (MPI_Gather_init); <c>Value</c> is null elsewhere.</summary>
    let gatherInit root (values: 'T[]) (comm: Intracommunicator) = comm.PersistentGather<'T>(values, root)

    /// <summary>Block <c>rank</c> of the root's array cut into blocks of <paramref name="count"/> (MPI_Scatter_init); the array is given only at the root.</summary>
    let scatterInit root count (values: 'T[] option) (comm: Intracommunicator) =
        comm.PersistentScatter<'T>(Option.defaultValue Unchecked.defaultof<'T[]> values, count, root)

    /// <summary>Every rank's <paramref name="values"/>, of one length, concatenated in rank order (MPI_Allgather_init).</summary>
    let allgatherInit (values: 'T[]) (comm: Intracommunicator) = comm.PersistentAllgather<'T>(values)

    /// <summary>Block <c>j</c> of <paramref name="count"/> elements to rank <c>j</c>; what each rank sent here, by rank (MPI_Alltoall_init).</summary>
    let alltoallInit count (values: 'T[]) (comm: Intracommunicator) = comm.PersistentAlltoall<'T>(values, count)

    /// <summary>Starts a persistent request (MPI_Start); it must not be active.</summary>
    let start (request: PersistentRequest) = request.Start()

    /// <summary>Starts each request in order (MPI_Startall).</summary>
    let startAll (requests: PersistentRequest seq) = PersistentRequest.StartAll requests

    /// <summary>Waits for a request to complete (MPI_Wait); an inactive persistent request returns at once. Its value, if it has one, is its <c>Value</c>.</summary>
    let wait (request: Request) = request.Wait() |> ignore

    /// <summary>Waits for every request in order (MPI_Waitall).</summary>
    let waitAll (requests: #Request seq) = for request in requests do wait request

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

    // ---- Neighbourhood collectives, by slot: on a grid two per dimension, down then up (off a non-periodic edge, default); on a graph one per neighbour ----

    /// <summary>Sends <paramref name="value"/> to every neighbour; gives what each sent, by slot (MPI_Neighbor_allgather).</summary>
    let neighborAllgather (value: 'T) (topology: TopologicalCommunicator) : 'T[] = topology.NeighborAllgather<'T>(value)

    /// <summary>Sends <paramref name="values"/> to every neighbour; gives their arrays concatenated by slot, <paramref name="counts"/> (one per slot) long each (MPI_Neighbor_allgatherv).</summary>
    let neighborAllgatherv (counts: int[]) (values: 'T[]) (topology: TopologicalCommunicator) : 'T[] =
        topology.NeighborAllgatherFlattened<'T>(values, counts)

    /// <summary>Sends <c>values[slot]</c> to each slot's neighbour; gives what each sent here, by slot (MPI_Neighbor_alltoall).</summary>
    let neighborAlltoall (values: 'T[]) (topology: TopologicalCommunicator) : 'T[] = topology.NeighborAlltoall<'T>(values)

    /// <summary>Sends blocks of <paramref name="sendCounts"/>[slot] elements to each slot's neighbour; gives the blocks of <paramref name="receiveCounts"/>[slot] each sent here, concatenated by slot (MPI_Neighbor_alltoallv).</summary>
    let neighborAlltoallv (sendCounts: int[]) (receiveCounts: int[]) (values: 'T[]) (topology: TopologicalCommunicator) : 'T[] =
        topology.NeighborAlltoallFlattened<'T>(values, sendCounts, receiveCounts)

    /// <summary>Starts <c>neighborAllgather</c> (MPI_Ineighbor_allgather).</summary>
    let ineighborAllgather (value: 'T) (topology: TopologicalCommunicator) = pending (topology.ImmediateNeighborAllgather<'T>(value)) id

    /// <summary>Starts <c>neighborAlltoall</c> (MPI_Ineighbor_alltoall).</summary>
    let ineighborAlltoall (values: 'T[]) (topology: TopologicalCommunicator) = pending (topology.ImmediateNeighborAlltoall<'T>(values)) id
