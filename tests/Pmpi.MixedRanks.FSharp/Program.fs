// The collectives of MixedLanguageTests as an F# programmer writes them: (+), max and a lambda, Mpi.broadcast of an
// array, options at the root. The C# and Visual Basic programs beside it make the same calls in their idioms.
open Pmpi.FSharp

let check (rank: int) what n (got: 'T[]) (expected: int -> 'T) =
    got |> Array.iteri (fun i v ->
        if v <> expected i then failwithf "F# rank %d: %s of %d elements: element %d is %A, expected %A" rank what n i v (expected i))

/// Every rank's (i + rank) % 3 combined by a + b + ab: the product of (1 + each) less one.
let own size i = (List.init size (fun r -> 1.0 + float ((i + r) % 3)) |> List.reduce (*)) - 1.0

[<EntryPoint>]
let main argv =
    Mpi.run argv (fun world args ->
        let rank, size = Mpi.rank world, Mpi.size world
        if args = [| "mismatch" |] then
            world |> Mpi.allreduceArray (fun a b -> a - b) (Array.zeroCreate<float> 262_144) |> ignore
            failwith "The mismatched allreduce returned."
        let checks = ref 0
        let check what n got expected =
            check rank what n got expected
            checks.Value <- checks.Value + 1
        for n in [ 1; 1000; 131_072; 524_288 ] do
            let mine = Array.init n (fun i -> float (i % 97 * (rank + 1)))
            check "sum" n (world |> Mpi.allreduceArray (+) mine) (fun i -> float (i % 97 * (size * (size + 1) / 2)))
            check "max" n (world |> Mpi.allreduceArray max mine) (fun i -> float (i % 97 * size))
            let ownValues = Array.init n (fun i -> float ((i + rank) % 3))
            check "user operation" n (world |> Mpi.allreduceArray (fun a b -> a + b + a * b) ownValues) (own size)
            let root = n % size
            match world |> Mpi.reduceArray root (+) mine with
            | Some reduced -> check "reduce" n reduced (fun i -> float (i % 97 * (size * (size + 1) / 2)))
            | None -> if rank = root then failwith "The root's reduce gave None."
            let shared = world |> Mpi.broadcast 0 (Array.zeroCreate<float> n)
            check "broadcast" n shared (fun i -> float i * 0.5)
        check "scalar sum" 1 [| world |> Mpi.allreduce (+) (rank + 1) |] (fun _ -> size * (size + 1) / 2)
        check "scalar max" 1 [| world |> Mpi.allreduce max (float rank * 1.5) |] (fun _ -> float (size - 1) * 1.5)
        check "scalar user operation" 1 [| world |> Mpi.allreduce (fun a b -> a + b + a * b) (int64 (rank % 2)) |] (fun _ -> (1L <<< (size / 2)) - 1L)
        // Nonblocking, persistent and neighbourhood calls, each rank in its own language's form.
        let big = Array.init 524_288 (fun i -> float (i % 97 * (rank + 1)))
        let pending = world |> Mpi.iallreduceArray (+) big
        let mutable computed = 0.0
        for i in 0 .. 100_000 do computed <- computed + sqrt (float i)
        check "nonblocking sum" big.Length pending.Value (fun i -> float (i % 97 * (size * (size + 1) / 2)))
        let shared = Array.zeroCreate<float> 1000
        (world |> Mpi.ibroadcastInto 0 shared).Value |> ignore
        check "nonblocking broadcast" 1000 shared (fun i -> float i * 0.5)
        let round = [| 0.0 |]
        let highest = world |> Mpi.allreduceInit max round
        for r in 1 .. 3 do
            round[0] <- float (rank * r)
            Mpi.start highest
            Mpi.wait highest
            check "persistent max" 1 highest.Value (fun _ -> float ((size - 1) * r))
        use ring = world |> Mpi.cartesian [| size |] [| true |] false
        check "neighbours" 2 (ring |> Mpi.neighborAlltoall [| rank * 10; rank * 10 + 1 |]) (fun slot ->
            if slot = 0 then (rank + size - 1) % size * 10 + 1 else (rank + 1) % size * 10)
        printfn "F# rank %d: %d checks passed" rank checks.Value)
    0
