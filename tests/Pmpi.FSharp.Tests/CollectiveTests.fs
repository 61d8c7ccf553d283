module Pmpi.FSharp.Tests.CollectiveTests

open Xunit
open Pmpi.FSharp
open Pmpi.Polyglot

[<Fact>]
let ``Allreduce_PlusOperator_SumsOnEveryRank`` () =
    let sums = Job.run 4 (fun world -> world |> Mpi.allreduce (+) (Mpi.rank world + 1))
    Assert.Equal<int[]>([| 10; 10; 10; 10 |], sums)

[<Fact>]
let ``Reduce_MaxFunction_SomeAtRootNoneElsewhere`` () =
    let maxima = Job.run 3 (fun world -> world |> Mpi.reduce 1 max (float (Mpi.rank world) * 1.5))
    Assert.Equal<float option[]>([| None; Some 3.0; None |], maxima)

[<Fact>]
let ``Allreduce_LambdaOnRecords_PicksOldestPerson`` () =
    let oldest =
        Job.run 3 (fun world ->
            let me = { Name = $"rank {Mpi.rank world}"; Age = 20 + 7 * (Mpi.rank world % 2); Languages = [ "F#" ] }
            world |> Mpi.allreduce (fun a b -> if b.Age > a.Age then b else a) me)
    Assert.All(oldest, fun person -> Assert.Equal("rank 1", person.Name))

[<Fact>]
let ``ReduceArray_ElementwiseMultiply_OnlyRootHasResult`` () =
    let products = Job.run 3 (fun world -> world |> Mpi.reduceArray 0 (*) [| 2; Mpi.rank world + 1 |])
    Assert.Equal<int[] option[]>([| Some [| 8; 6 |]; None; None |], products)

[<Fact>]
let ``Scan_AndExscan_PrefixStringsInRankOrder`` () =
    let prefixes = Job.run 3 (fun world -> Mpi.scan (+) (string (Mpi.rank world)) world, Mpi.exscan (+) (string (Mpi.rank world)) world)
    Assert.Equal<(string * string option)[]>([| "0", None; "01", Some "0"; "012", Some "01" |], prefixes)

[<Fact>]
let ``Broadcast_Union_EveryRankGetsRootsValue`` () =
    let shapes = Job.run 3 (fun world -> world |> Mpi.broadcast 2 (if Mpi.rank world = 2 then Rectangle(2.0, 3.0) else Empty))
    Assert.All(shapes, fun shape -> Assert.Equal(Rectangle(2.0, 3.0), shape))

[<Fact>]
let ``GatherAndScatter_ListsOfTuples_RoundTrip`` () =
    let results =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let gathered = world |> Mpi.gather 0 [ r, $"r{r}" ]
            let back = world |> Mpi.scatter 0 (gathered |> Option.defaultValue [||] |> Array.rev)
            gathered, back, world |> Mpi.allgather r)
    let gathered, _, all = results[0]
    Assert.Equal(Some [ [ 0, "r0" ]; [ 1, "r1" ]; [ 2, "r2" ] ], gathered |> Option.map List.ofArray)
    Assert.Equal<(int * string) list[]>([| [ 2, "r2" ]; [ 1, "r1" ]; [ 0, "r0" ] |], results |> Array.map (fun (_, back, _) -> back))
    Assert.Equal<int[]>([| 0; 1; 2 |], all)

[<Fact>]
let ``Split_NegativeColor_NoneForThatRank`` () =
    let sizes = Job.run 4 (fun world -> world |> Mpi.split (if Mpi.rank world = 3 then -1 else Mpi.rank world % 2) 0 |> Option.map Mpi.size)
    Assert.Equal<int option[]>([| Some 2; Some 1; Some 2; None |], sizes)

/// F#'s operators name the predefined operations, so ranks that pass (+) and ranks that pass C#'s Operation.Add take
/// one algorithm: an array of 2 MB goes by blocks on all four (it hung when F#'s ranks took another).
[<Fact>]
let ``AllreduceArray_FSharpOperatorsBesideCSharpOperations_OneAlgorithmAndTheSerialResult`` () =
    let length = 262_144
    let mine rank = Array.init length (fun i -> float ((i % 97) * (rank + 1)))
    let results =
        Job.run 4 (fun world ->
            let values = mine world.Rank
            if world.Rank < 2 then
                world.Allreduce(values, Pmpi.Operation<float>.Add), world.Allreduce(values, Pmpi.Operation<float>.Max)
            else
                Mpi.allreduceArray (+) values world, Mpi.allreduceArray max values world)
    let sum = Array.init length (fun i -> float ((i % 97) * (1 + 2 + 3 + 4)))
    let maximum = mine 3
    Assert.All(results, fun (sums, maxima) ->
        Assert.Equal<float[]>(sum, sums)
        Assert.Equal<float[]>(maximum, maxima))

/// allreduceInto and iallreduceInto fill the caller's own array on every rank, in place too, and agree with C#'s ref
/// form: an array of 2 MB goes by blocks on all four.
[<Fact>]
let ``AllreduceInto_BlockingNonblockingInPlaceAndBesideCSharpRef_FilledWithTheSerialResult`` () =
    let length = 262_144
    let results =
        Job.run 4 (fun world ->
            let values = Array.init length (fun i -> float ((i % 97) * (world.Rank + 1)))
            let result = if world.Rank = 1 then values else Array.zeroCreate length
            match world.Rank with
            | 3 ->
                let mutable target = result
                world.Allreduce(values, Pmpi.Operation<float>.Add, &target)
            | 2 -> (world |> Mpi.iallreduceInto (+) values result).Value
            | _ -> world |> Mpi.allreduceInto (+) values result
            result)
    let sum = Array.init length (fun i -> float ((i % 97) * (1 + 2 + 3 + 4)))
    Assert.All(results, fun result -> Assert.Equal<float[]>(sum, result))

[<Fact>]
let ``AllreduceInto_AResultOfAnotherLength_FailsNamingRankAndBothLengths`` () =
    let error =
        Assert.ThrowsAny<exn>(fun () ->
            Job.run 2 (fun world -> world |> Mpi.allreduceInto (+) [| 1; 2; 3 |] (Array.zeroCreate (if Mpi.rank world = 1 then 2 else 4))) |> ignore)
    Assert.Matches("rank [01]'s result array holds [24] elements; its values, 3", error.ToString())

/// Each F# operator names its predefined operation: ranks passing it beside ranks passing Operation's agree, where a
/// user's operation beside a predefined one would fail the collective as a mismatch.
[<Fact>]
let ``Allreduce_FSharpOperatorsBesideOperationsOwn_AgreeOnEveryOperation`` () =
    let results =
        Job.run 4 (fun world ->
            let r = Mpi.rank world
            let fsharp = r % 2 = 0
            let pick (own: Pmpi.ReductionOperation<'T>) (op: 'T -> 'T -> 'T) (value: 'T) =
                if fsharp then Mpi.allreduce op value world else world.Allreduce(value, own)
            pick Pmpi.Operation<int>.Multiply (*) (r + 1),
            pick Pmpi.Operation<float>.Min min (float r),
            pick Pmpi.Operation<int>.BitwiseAnd (&&&) (7 - r),
            pick Pmpi.Operation<int>.BitwiseOr (|||) (1 <<< r),
            pick Pmpi.Operation<int64>.ExclusiveOr (^^^) (int64 r),
            pick Pmpi.Operation<bool>.LogicalAnd (&&) (r < 3),
            pick Pmpi.Operation<bool>.LogicalOr (||) (r = 2))
    Assert.All(results, fun result -> Assert.Equal((24, 0.0, 4, 15, 0L, false, true), result))

[<Fact>]
let ``BroadcastFrom_ValueOnlyAtTheRoot_EveryRankGetsIt`` () =
    let values = Job.run 3 (fun world -> world |> Mpi.broadcastFrom 1 (if Mpi.rank world = 1 then Some [ "a"; "b" ] else None))
    Assert.All(values, fun value -> Assert.Equal<string list>([ "a"; "b" ], value))

[<Fact>]
let ``BroadcastInto_ArraysOfTheRootsLength_FilledInPlace`` () =
    let results =
        Job.run 4 (fun world ->
            let mine = if Mpi.rank world = 2 then [| 1.5; 2.5; 3.5 |] else Array.zeroCreate 3
            world |> Mpi.broadcastInto 2 mine
            mine)
    Assert.All(results, fun result -> Assert.Equal<float[]>([| 1.5; 2.5; 3.5 |], result))

[<Fact>]
let ``BroadcastInto_AShorterArray_FailsNamingBothLengths`` () =
    let error =
        Assert.ThrowsAny<exn>(fun () ->
            Job.run 2 (fun world -> world |> Mpi.broadcastInto 0 (Array.zeroCreate (if Mpi.rank world = 0 then 4 else 3))) |> ignore)
    Assert.Contains("holds 3 elements; the root's, rank 0's, 4", error.ToString())

[<Fact>]
let ``ScatterFromAndAlltoall_EachRankGetsItsElements`` () =
    let results =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let mine = world |> Mpi.scatterFrom 0 (if r = 0 then Some [| 10; 11; 12 |] else None)
            mine, world |> Mpi.alltoall (Array.init 3 (fun j -> 10 * r + j)))
    Assert.Equal<(int * int[])[]>([| 10, [| 0; 10; 20 |]; 11, [| 1; 11; 21 |]; 12, [| 2; 12; 22 |] |], results)

[<Fact>]
let ``VForms_UnevenCounts_BlocksInRankOrder`` () =
    // Rank r holds r + 1 elements: r, r, ...
    let counts = [| 1; 2; 3 |]
    let results =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let mine = Array.create (r + 1) r
            let gathered = world |> Mpi.gatherv 2 counts mine
            let all = world |> Mpi.allgatherv counts mine
            let scattered = world |> Mpi.scatterv 0 counts (if r = 0 then Some [| 7; 8; 8; 9; 9; 9 |] else None)
            // Rank r sends (j + 1) copies of r to rank j, and receives (r + 1) from each.
            let exchanged = world |> Mpi.alltoallv [| 1; 2; 3 |] (Array.create 3 (r + 1)) [| r; r; r; r; r; r |]
            gathered, all, scattered, exchanged)
    let everyone = [| 0; 1; 1; 2; 2; 2 |]
    Assert.Equal<(int[] option * int[] * int[] * int[])[]>(
        [| None, everyone, [| 7 |], [| 0; 1; 2 |]
           None, everyone, [| 8; 8 |], [| 0; 0; 1; 1; 2; 2 |]
           Some everyone, everyone, [| 9; 9; 9 |], [| 0; 0; 0; 1; 1; 1; 2; 2; 2 |] |],
        results)

[<Fact>]
let ``DupAndTopologies_GridShiftAndGraphNeighbours`` () =
    let results =
        Job.run 4 (fun world ->
            let copy = Mpi.dup world
            let grid = world |> Mpi.cartesian [| 2; 2 |] [| true; false |] false
            let ring = world |> Mpi.graph [| [| 1; 3 |]; [| 0; 2 |]; [| 1; 3 |]; [| 2; 0 |] |] false
            Mpi.rank copy, Mpi.coordinates grid, grid |> Mpi.shift 0 1, Mpi.neighbors ring |> Array.sort)
    Assert.Equal<(int * int[] * (int * int) * int[])[]>(
        [| 0, [| 0; 0 |], (2, 2), [| 1; 3 |]
           1, [| 0; 1 |], (3, 3), [| 0; 2 |]
           2, [| 1; 0 |], (0, 0), [| 1; 3 |]
           3, [| 1; 1 |], (1, 1), [| 0; 2 |] |],
        results)
