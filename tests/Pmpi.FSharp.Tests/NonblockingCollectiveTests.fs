module Pmpi.FSharp.Tests.NonblockingCollectiveTests

open System
open Xunit
open Pmpi.FSharp

[<Fact>]
let ``Iallreduce_PlusOperator_SumsOnEveryRank`` () =
    let sums = Job.run 4 (fun world -> (world |> Mpi.iallreduce (+) (Mpi.rank world + 1)).Value)
    Assert.Equal<int[]>([| 10; 10; 10; 10 |], sums)

/// Every Mpi.i* function's Value is what the blocking function of the same name returns, options included; all are
/// started before any is waited for, and waited for in reverse.
[<Fact>]
let ``EveryImmediateCollective_ValueIsWhatItsBlockingFunctionReturns`` () =
    let results =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let counts = [| 1; 2; 3 |]
            let mine = Array.create (r + 1) r
            let fromRoot = if r = 2 then "from the root" else ""
            let toScatter = if r = 0 then [| 100; 101; 102 |] else [||]
            let toScatterv = if r = 0 then Some [| 7; 8; 8; 9; 9; 9 |] else None
            let barrier = Mpi.ibarrier world
            let broadcast = world |> Mpi.ibroadcast 2 fromRoot
            let product = world |> Mpi.ireduce 2 (*) (r + 1)
            let zeroAtRoot = world |> Mpi.ireduce 0 (+) (r - 1)
            let sums = world |> Mpi.ireduceArray 0 (+) [| r; 1 |]
            let maximum = world |> Mpi.iallreduce max r
            let prefix = world |> Mpi.iscan (+) (string r)
            let before = world |> Mpi.iexscan (+) (string r)
            let gathered = world |> Mpi.igather 2 (r * 10)
            let all = world |> Mpi.iallgather $"r{r}"
            let scattered = world |> Mpi.iscatter 0 toScatter
            let exchanged = world |> Mpi.ialltoall (Array.init 3 (fun j -> 10 * r + j))
            let gatheredv = world |> Mpi.igatherv 0 counts mine
            let allv = world |> Mpi.iallgatherv counts mine
            let scatteredv = world |> Mpi.iscatterv 0 counts toScatterv
            let exchangedv = world |> Mpi.ialltoallv [| 1; 2; 3 |] (Array.create 3 (r + 1)) (Array.create 6 r)
            let requests =
                [ barrier.Request; broadcast.Request; product.Request; zeroAtRoot.Request; sums.Request; maximum.Request
                  prefix.Request; before.Request; gathered.Request; all.Request; scattered.Request; exchanged.Request
                  gatheredv.Request; allv.Request; scatteredv.Request; exchangedv.Request ]
            Mpi.waitAll (List.rev requests)
            [ Job.agree "ibarrier" barrier.Value (Mpi.barrier world)
              Job.agree "ibroadcast" broadcast.Value (world |> Mpi.broadcast 2 fromRoot)
              Job.agree "ireduce" product.Value (world |> Mpi.reduce 2 (*) (r + 1))
              Job.agree "ireduce to 0" zeroAtRoot.Value (world |> Mpi.reduce 0 (+) (r - 1))
              Job.agree "ireduceArray" sums.Value (world |> Mpi.reduceArray 0 (+) [| r; 1 |])
              Job.agree "iallreduce" maximum.Value (world |> Mpi.allreduce max r)
              Job.agree "iscan" prefix.Value (world |> Mpi.scan (+) (string r))
              Job.agree "iexscan" before.Value (world |> Mpi.exscan (+) (string r))
              Job.agree "igather" gathered.Value (world |> Mpi.gather 2 (r * 10))
              Job.agree "iallgather" all.Value (world |> Mpi.allgather $"r{r}")
              Job.agree "iscatter" scattered.Value (world |> Mpi.scatter 0 toScatter)
              Job.agree "ialltoall" exchanged.Value (world |> Mpi.alltoall (Array.init 3 (fun j -> 10 * r + j)))
              Job.agree "igatherv" gatheredv.Value (world |> Mpi.gatherv 0 counts mine)
              Job.agree "iallgatherv" allv.Value (world |> Mpi.allgatherv counts mine)
              Job.agree "iscatterv" scatteredv.Value (world |> Mpi.scatterv 0 counts toScatterv)
              Job.agree "ialltoallv" exchangedv.Value (world |> Mpi.alltoallv [| 1; 2; 3 |] (Array.create 3 (r + 1)) (Array.create 6 r)) ],
            zeroAtRoot.Value)
    Assert.All(results, fun (agreements, _) -> Job.assertAgree agreements)
    // A root's 0 is Some 0, told from the other ranks' None.
    Assert.Equal<int option[]>([| Some 0; None; None |], results |> Array.map snd)

[<Fact>]
let ``IbroadcastInto_ArraysOfTheRootsLength_FilledInPlace`` () =
    let results =
        Job.run 3 (fun world ->
            let mine = if Mpi.rank world = 1 then [| 1.5; 2.5 |] else Array.zeroCreate 2
            (world |> Mpi.ibroadcastInto 1 mine).Value
            mine)
    Assert.All(results, fun result -> Assert.Equal<float[]>([| 1.5; 2.5 |], result))

[<Fact>]
let ``IbroadcastInto_AShorterArray_ValueFailsNamingBothLengths`` () =
    let error =
        Assert.ThrowsAny<exn>(fun () ->
            Job.run 2 (fun world -> (world |> Mpi.ibroadcastInto 0 (Array.zeroCreate<int> (if Mpi.rank world = 0 then 4 else 3))).Value) |> ignore)
    Assert.Contains("Mpi.ibroadcastInto: rank 1's array holds 3 elements; the root's, rank 0's, 4", error.ToString())

/// 2 MB of doubles go by blocks at 4 ranks; ranks passing (+) and ranks passing C#'s Operation.Add take one algorithm.
[<Fact>]
let ``IallreduceArray_2MBOfDoublesBesideCSharpRanks_TheSerialSum`` () =
    let length = 262_144
    let mine rank = Array.init length (fun i -> float ((i % 97) * (rank + 1)))
    let sums =
        Job.run 4 (fun world ->
            let values = mine world.Rank
            if world.Rank % 2 = 0 then (world |> Mpi.iallreduceArray (+) values).Value
            else world.ImmediateAllreduce(values, Pmpi.Operation<float>.Add).Value)
    let expected = Array.init length (fun i -> float ((i % 97) * (1 + 2 + 3 + 4)))
    Assert.All(sums, fun sum -> Assert.Equal<float[]>(expected, sum))

/// Each rank starts the allreduce, then computes, looking at the request between steps (by IsCompleted on even ranks,
/// by the WaitAsync task on odd ones) and making no MPI call: only progress apart from the rank's calls completes
/// it. Rank 0 starts last, so the others are computing when it joins. Should progress need a call, the loop ends
/// at its deadline and the test fails on its flag, not by a hang.
[<Fact>]
let ``Iallreduce_CompletesWhileTheRankComputes`` () =
    let results =
        Job.run 4 (fun world ->
            if world.Rank = 0 then Threading.Thread.Sleep 100
            let sum = world |> Mpi.iallreduce (+) (float (world.Rank + 1))
            let task = sum.Request.WaitAsync()
            let completed () = if world.Rank % 2 = 0 then sum.IsCompleted else task.IsCompleted
            let deadline = DateTime.UtcNow + Job.timeout / 2.0
            let mutable steps = 0
            let mutable work = 0.0
            while not (completed ()) && DateTime.UtcNow < deadline do
                for i in 0..999 do work <- work + sqrt (float i + work % 7.0)
                steps <- steps + 1
            completed (), steps, sum.Value)
    Assert.All(results, fun (completed, _, sum) ->
        Assert.True(completed, "The allreduce did not complete while the rank computed.")
        Assert.Equal(10.0, sum))
    Assert.True(results |> Array.skip 1 |> Array.forall (fun (_, steps, _) -> steps > 0), "The later ranks computed before the allreduce completed.")

[<Fact>]
let ``Await_InAnAsyncWorkflow_GivesTheValues`` () =
    let results =
        Job.run 3 (fun world ->
            let total = world |> Mpi.ireduce 1 (+) (Mpi.rank world)
            let everyone = world |> Mpi.iallgather (Mpi.rank world)
            async {
                let! all = Mpi.await everyone
                let! sum = Mpi.await total
                return sum, all
            }
            |> Async.RunSynchronously)
    Assert.Equal<(int option * int[])[]>([| None, [| 0; 1; 2 |]; Some 3, [| 0; 1; 2 |]; None, [| 0; 1; 2 |] |], results)

/// The workflow raises the collective's own error, here the user's operation's, not an AggregateException around it.
[<Fact>]
let ``Await_AFailingOperation_RaisesItsOwnError`` () =
    let errors =
        Job.run 2 (fun world ->
            let failing = world |> Mpi.iallreduce (fun (a: int) b -> if a + b > 0 then invalidOp "no positive sums" else a + b) 1
            try
                Mpi.await failing |> Async.RunSynchronously |> ignore
                None
            with error -> Some(error.GetType(), error.Message))
    Assert.All(errors, fun error -> Assert.Equal(Some(typeof<InvalidOperationException>, "no positive sums"), error))

[<Fact>]
let ``PendingCollective_RequestCannotBeCancelled_InvalidRequest`` () =
    let errors =
        Job.run 2 (fun world ->
            let barrier = Mpi.ibarrier world
            let error = Assert.Throws<Pmpi.MpiException>(fun () -> barrier.Request.Cancel())
            barrier.Value
            error.ErrorClass)
    Assert.All(errors, fun error -> Assert.Equal(Pmpi.ErrorClass.InvalidRequest, error))
