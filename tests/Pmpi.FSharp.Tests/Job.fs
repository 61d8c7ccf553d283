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

/// A result of the form under test beside the form it must agree with, each printed as F# prints it (options,
/// arrays and unit alike), and the name to report.
let agree name (tested: 'T) (reference: 'T) = name, sprintf "%A" tested, sprintf "%A" reference

/// Asserts that every pair agreed, naming the first that did not.
let assertAgree (agreements: (string * string * string) list) =
    for name, tested, reference in agreements do
        Xunit.Assert.True((tested = reference), $"{name}: {tested} where the reference gives {reference}")
