// A token goes around the ring of ranks [laps] times, each rank adding one. Rank 0 starts it and checks the count.
// Run: dotnet run --project examples/Ring.FSharp -- --pmpi-ranks 4 [laps]
open Pmpi.FSharp

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world args ->
        let laps = if args.Length > 0 then int args[0] else 3
        let rank, size = Mpi.rank world, Mpi.size world
        let next, previous = (rank + 1) % size, (rank + size - 1) % size
        let lap token =
            if rank = 0 then
                world |> Mpi.send next 0 (token + 1)
                world |> Mpi.recv<int> previous 0
            else
                let token = world |> Mpi.recv<int> previous 0
                world |> Mpi.send next 0 (token + 1)
                token
        let token = Seq.fold (fun token _ -> lap token) 0 (seq { 1 .. laps })
        if rank = 0 then printfn $"The token went {laps} times around {size} ranks (F#): {token}, expected {laps * size}")
    0
