// Every rank says hello. Run: dotnet run --project examples/Hello.FSharp -- --pmpi-ranks 4
open Pmpi
open Pmpi.FSharp

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world _ ->
        printfn $"Hello from rank {Mpi.rank world} of {Mpi.size world} on {Environment.ProcessorName} (F#)")
    0
