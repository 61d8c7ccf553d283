/// bench/native/collectives.c's Allreduce (a sum of doubles) through the F# face, with F#'s own (+).
module Pmpi.Bench.FSharp.Allreduce

open Pmpi
open Pmpi.FSharp

/// Mean seconds per call on this rank of an allreduce of `size` bytes, timed after a tenth as many untimed calls:
/// into one array of the caller's (`Mpi.allreduceInto`) when `into`, else in a new array each call (`Mpi.allreduceArray`).
let secondsPerCall (into: bool) (world: Intracommunicator) (size: int) (iterations: int) : float =
    let values = Array.init (size / sizeof<float>) (fun i -> float (Mpi.rank world + i))
    let result = Array.zeroCreate values.Length
    let warm = iterations / 10
    let mutable start = 0.0
    for i in 0 .. iterations + warm - 1 do
        if i = warm then
            Mpi.barrier world
            start <- Mpi.time ()
        if into then Mpi.allreduceInto (+) values result world
        else Mpi.allreduceArray (+) values world |> ignore
    (Mpi.time () - start) / float iterations
