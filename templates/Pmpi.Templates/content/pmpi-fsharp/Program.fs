// Run as 4 processes: pmpi run -n 4 bin/Debug/net10.0/PmpiJob.dll (the pmpi tool: dotnet tool install --global Pmpi.Cli)
// or as 4 threads of one process: dotnet run -- --pmpi-ranks 4
open Pmpi
open Pmpi.FSharp

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world _ ->
        printfn $"Hello from rank {Mpi.rank world} of {Mpi.size world} on {Environment.ProcessorName}"

        // Every rank contributes its rank and every rank receives the sum: 0 + 1 + ... + (size - 1).
        let sum = world |> Mpi.allreduce (+) (Mpi.rank world)
        if Mpi.rank world = 0 then printfn $"The ranks add up to {sum}")
    0
