module Pmpi.FSharp.Tests.PersistentRequestTests

open Xunit
open Pmpi.FSharp

/// Each start reads the array as it is then: three rounds with the array changed between them give each round's sum.
[<Fact>]
let ``AllreduceInit_ThreeRoundsArrayChangedBetween_EachRoundsSum`` () =
    let rounds =
        Job.run 4 (fun world ->
            let values = Array.zeroCreate<float> 1000
            let sum = world |> Mpi.allreduceInit (+) values
            [ for round in 1..3 do
                  Array.fill values 0 values.Length (float (round * (world.Rank + 1)))
                  Mpi.start sum
                  yield Array.copy sum.Value ])
    for rank in 0..3 do
        Assert.Equal<float[] list>([ for round in 1..3 -> Array.create 1000 (float (round * 10)) ], rounds[rank])

/// A ring exchange bound once: each round's sends and receives started together, with values changed between rounds.
[<Fact>]
let ``SendInitAndRecvInit_RingOverRounds_EachRoundFromTheLeft`` () =
    let received =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let outgoing = [| 0 |]
            let send = world |> Mpi.sendInit ((r + 1) % 3) 4 outgoing
            let receive = world |> Mpi.recvInit<int[]> ((r + 2) % 3) 4
            let into = world |> Mpi.recvIntoInit ((r + 2) % 3) 5 (Array.zeroCreate<int> 2)
            let sendPair = world |> Mpi.sendInit ((r + 1) % 3) 5 [| r; -r |]
            [ for round in 1..3 do
                  outgoing[0] <- 100 * round + r
                  Mpi.startAll [ receive; into; send; sendPair ]
                  Mpi.waitAll [ send; sendPair; into ]
                  yield receive.Value[0], Array.copy into.Value ])
    for r in 0..2 do
        let left = (r + 2) % 3
        Assert.Equal<(int * int[]) list>([ for round in 1..3 -> 100 * round + left, [| left; -left |] ], received[r])

/// Each persistent collective's round gives what the blocking function gives for the arrays as they are at its start.
[<Fact>]
let ``PersistentCollectives_TwoRounds_WhatTheBlockingFunctionsGive`` () =
    let results =
        Job.run 3 (fun world ->
            let r = Mpi.rank world
            let values = Array.zeroCreate<int> 3
            let shared = Array.zeroCreate<int> 2
            let barrier = Mpi.barrierInit world
            let broadcast = world |> Mpi.broadcastInit 1 shared
            let sum = world |> Mpi.reduceInit 0 (+) values
            let gathered = world |> Mpi.gatherInit 2 values
            let scattered = world |> Mpi.scatterInit 0 1 (if r = 0 then Some values else None)
            let all = world |> Mpi.allgatherInit values
            let exchanged = world |> Mpi.alltoallInit 1 values
            let requests: Pmpi.PersistentRequest list = [ barrier; broadcast; sum; gathered; scattered; all; exchanged ]
            [ for round in 1..2 do
                  for i in 0..2 do values[i] <- 100 * round + 10 * r + i
                  if r = 1 then Array.blit [| round; -round |] 0 shared 0 2
                  Mpi.startAll requests
                  Mpi.waitAll (List.rev requests)
                  let sum, gathered = Option.ofObj sum.Value, Option.ofObj gathered.Value
                  yield
                      [ Job.agree "broadcastInit" shared (world |> Mpi.broadcast 1 (Array.copy shared))
                        Job.agree "reduceInit" sum (world |> Mpi.reduceArray 0 (+) values)
                        Job.agree "gatherInit" gathered (world |> Mpi.gatherv 2 [| 3; 3; 3 |] values)
                        Job.agree "scatterInit" scattered.Value (world |> Mpi.scatterv 0 [| 1; 1; 1 |] (if r = 0 then Some values else None))
                        Job.agree "allgatherInit" all.Value (world |> Mpi.allgatherv [| 3; 3; 3 |] values)
                        Job.agree "alltoallInit" exchanged.Value (world |> Mpi.alltoall values) ],
                      // Each round fills the root's one result array again.
                      sum |> Option.map Array.copy ])
    Assert.All(results, fun rounds -> Assert.All(rounds, fun (agreements, _) -> Job.assertAgree agreements))
    Assert.Equal<int[] option list>([ Some [| 330; 333; 336 |]; Some [| 630; 633; 636 |] ], results[0] |> List.map snd)

[<Fact>]
let ``Start_AnActiveRequest_FailsAsInvalidRequest`` () =
    let errors =
        Job.run 2 (fun world ->
            let barrier = Mpi.barrierInit world
            Mpi.start barrier
            let error = Assert.Throws<Pmpi.MpiException>(fun () -> Mpi.start barrier)
            Mpi.wait barrier
            Mpi.wait barrier // inactive: returns at once
            error.ErrorClass, barrier.IsActive)
    Assert.All(errors, fun error -> Assert.Equal((Pmpi.ErrorClass.InvalidRequest, false), error))
