// The PMPI paper's sample in F#: rank 0 is the master, every other rank a worker; the other ranks may be
// MatMul.CSharp or MatMul.VisualBasic, which speak the same protocol (see MatMul.fs).
// Run: dotnet run --project examples/MatMul.FSharp -- --pmpi-ranks 3 [rows cols columnsOfB] [--label text]
open Pmpi.FSharp
open Pmpi.Examples.FSharp

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world args ->
        match MatMul.parseArguments args, Mpi.rank world with
        | (_, label), worker when worker <> 0 -> MatMul.worker world (defaultArg label "F#")
        | (sizes, _), _ ->
            let result = MatMul.master world sizes[0] sizes[1] sizes[2]
            result.Report "F#" |> List.iter (printfn "%s")
            if result.MaxError > MatMul.Tolerance then Mpi.abort 3 world)
    0
