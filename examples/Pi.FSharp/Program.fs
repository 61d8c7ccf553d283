// Computes pi by integrating 4 / (1 + x²) over [0, 1]: each rank sums every size-th strip, then reduce adds the parts.
// Run: dotnet run --project examples/Pi.FSharp -- --pmpi-ranks 4 [strips]
open System
open Pmpi.FSharp

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world args ->
        let strips = world |> Mpi.broadcast 0 (if args.Length > 0 then int64 args[0] else 50_000_000L)
        let start = Mpi.time ()
        let width = 1.0 / float strips
        let mutable sum = 0.0
        for i in int64 (Mpi.rank world) .. int64 (Mpi.size world) .. strips - 1L do
            let x = (float i + 0.5) * width
            sum <- sum + 4.0 / (1.0 + x * x)
        match world |> Mpi.reduce 0 (+) (sum * width) with
        | Some pi ->
            printfn $"pi ≈ %.12f{pi} (error %.2E{abs (pi - Math.PI)}) from {strips:N0} strips on {Mpi.size world} ranks in %.3f{Mpi.time () - start} s (F#)"
        | None -> ())
    0
