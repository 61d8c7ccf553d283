/// bench/native/collectives.c's Allreduce (a sum of doubles) through the F# face, with F#'s own (+).
module Pmpi.Bench.FSharp.Allreduce

open Pmpi
open Pmpi.FSharp

/// Mean seconds per call on this rank of an allreduce of `size` bytes, timed after a tenth as many untimed calls.
let secondsPerCall (world: Intracommunicator) (size: int) (iterations: int) : float =
    let values = Array.init (size / sizeof<float>) (fun i -> float (Mpi.rank world + i))
    let warm = iterations / 10
    let mutable start = 0.0
    for i in 0 .. iterations + warm - 1 do
        if i = warm then
            Mpi.barrier world
            start <- Mpi.time ()
        Mpi.allreduceArray (+) values world |> ignore
    (Mpi.time () - start) / float iterations
