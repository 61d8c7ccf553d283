module Pmpi.FSharp.Tests.Job

open System
open Pmpi.FSharp

/// A bound for in-process jobs that should take well under a second.
let timeout = TimeSpan.FromSeconds 30.0

/// Runs <paramref name="body"/> on <paramref name="ranks"/> in-process ranks and returns what each rank returned, in rank order.
let run ranks (body: Pmpi.Intracommunicator -> 'T) : 'T[] =
    let results = Array.zeroCreate ranks
    Mpi.runRanks ranks timeout (fun world -> results[world.Rank] <- body world)
    results
