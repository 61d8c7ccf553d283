/// The master/worker matrix multiply of the PMPI paper, speaking the protocol of MatMul.CSharp: each worker sends its
/// language (tag 0); the master sends each worker [| rows; columns; columnsOfB |] (tag 1), B (tag 2) and its rows of A
/// (tag 3); the worker returns its rows of C (tag 4). Row-major float[]; the first rows % workers workers take one
/// row more.
module Pmpi.Examples.FSharp.MatMul

open System
open System.Globalization
open System.Numerics
open System.Runtime.CompilerServices
open System.Runtime.Intrinsics
open Pmpi.FSharp

/// What the master measured: the product, the distributed and sequential times, and the largest difference.
type MatMulResult =
    { Rows: int; Columns: int; ColumnsOfB: int; Product: float[]; Workers: string[]
      Seconds: float; SequentialSeconds: float; MaxError: float }

    /// The master's report, one line per worker then the result line.
    member r.Report masterLanguage =
        [ for w in 0 .. r.Workers.Length - 1 do
              yield $"worker {w + 1}: {r.Workers[w]}"
          yield String.Format(CultureInfo.InvariantCulture,
              "C = A({0}x{1}) x B({1}x{2}) by a master in {3} and {4} workers in {5:F3} s (sequential {6:F3} s), max abs error {7:E2}, sum of C {8:R}",
              r.Rows, r.Columns, r.ColumnsOfB, masterLanguage, r.Workers.Length, r.Seconds, r.SequentialSeconds, r.MaxError, Array.sum r.Product) ]

/// The largest difference from the sequential product that counts as correct.
[<Literal>]
let Tolerance = 1e-9

let private languageTag, sizeTag, bTag, aTag, cTag = 0, 1, 2, 3, 4

/// The sizes (default: the paper's 2400 × 1200 times 1200 × 500) and the optional --label.
let parseArguments (args: string[]) =
    let rec parse sizes label =
        function
        | "--label" :: text :: rest -> parse sizes (Some text) rest
        | (number: string) :: rest when List.length sizes < 3 && fst (Int32.TryParse(number, NumberStyles.None, CultureInfo.InvariantCulture)) && int number > 0 ->
            parse (sizes @ [ int number ]) label rest
        | unexpected :: _ -> invalidArg "args" $"Unexpected argument '{unexpected}': expected rows, columns and columns of B (positive numbers), and --label text."
        | [] -> sizes @ List.skip (List.length sizes) [ 2400; 1200; 500 ], label
    parse [] None (List.ofArray args)

// row += scale × other over length elements: 512-bit vectors where the processor has them, then Vector<T>, then one
// at a time, with fused multiply-adds (what a C compiler's vectoriser makes of the loop with -O3 -march=native). The
// vectors load and store at offsets from the rows' first elements (&row[start]), whose ends are checked once.
let inline private addScaled (row: float[]) rowStart (scale: float) (other: float[]) otherStart length =
    if rowStart + length > row.Length || otherStart + length > other.Length then raise (ArgumentOutOfRangeException "length")
    let rowOfC = &row[rowStart]
    let rowOfB = &other[otherStart]
    let mutable j = 0un
    let length = unativeint length
    if Vector512.IsHardwareAccelerated then
        let scales = Vector512.Create scale
        while j + unativeint Vector512<float>.Count <= length do
            Vector512.FusedMultiplyAdd(scales, Vector512.LoadUnsafe(&rowOfB, j), Vector512.LoadUnsafe(&rowOfC, j)).StoreUnsafe(&rowOfC, j)
            j <- j + unativeint Vector512<float>.Count
    let scaled = Vector<float> scale
    while j + unativeint Vector<float>.Count <= length do
        Vector.FusedMultiplyAdd(scaled, Vector.LoadUnsafe(&rowOfB, j), Vector.LoadUnsafe(&rowOfC, j)).StoreUnsafe(&rowOfC, j)
        j <- j + unativeint Vector<float>.Count
    while j < length do
        let index = rowStart + int j
        row[index] <- Math.FusedMultiplyAdd(scale, other[otherStart + int j], row[index])
        j <- j + 1un

/// C += A × B in i-k-j order, so the inner loop runs along rows of B and C a vector at a time.
// Called once per rank: optimised at once rather than started as tier-0 code and patched by on-stack replacement.
[<MethodImpl(MethodImplOptions.AggressiveOptimization)>]
let multiply (a: float[]) (b: float[]) (c: float[]) rows columns columnsOfB =
    for i in 0 .. rows - 1 do
        for k in 0 .. columns - 1 do
            addScaled c (i * columnsOfB) a[i * columns + k] b (k * columnsOfB) columnsOfB

let private multiplySequentially (a: float[]) (b: float[]) (c: float[]) rows columns columnsOfB =
    for i in 0 .. rows - 1 do
        for k in 0 .. columns - 1 do
            for j in 0 .. columnsOfB - 1 do
                c[i * columnsOfB + j] <- c[i * columnsOfB + j] + a[i * columns + k] * b[k * columnsOfB + j]

let private share rows workers worker = rows / workers + (if worker - 1 < rows % workers then 1 else 0)

let private firstRow rows workers worker = (worker - 1) * (rows / workers) + min (worker - 1) (rows % workers)

let private fill rows columns element = Array.init (rows * columns) (fun index -> element (index / columns) (index % columns))

/// Rank 0's part: distributes the work, assembles C and checks it against a sequential product.
let master world rows columns columnsOfB =
    let a = fill rows columns (fun i j -> float ((i * 31 + j * 17) % 101) / 101.0 - 0.5)
    let b = fill columns columnsOfB (fun i j -> float ((i * 13 + j * 7) % 37) / 37.0 - 0.25)
    let workers = Mpi.size world - 1
    let languages = Array.init workers (fun w -> world |> Mpi.recv<string> (w + 1) languageTag)

    let start = Mpi.time ()
    let c = Array.zeroCreate (rows * columnsOfB)
    if workers = 0 then multiply a b c rows columns columnsOfB
    for w in 1 .. workers do
        let first, count = firstRow rows workers w, share rows workers w
        world |> Mpi.send w sizeTag [| count; columns; columnsOfB |]
        world |> Mpi.send w bTag b
        world |> Mpi.send w aTag a[first * columns .. (first + count) * columns - 1]
    for w in 1 .. workers do
        let rowsOfC = world |> Mpi.recv<float[]> w cTag
        rowsOfC.CopyTo(c, firstRow rows workers w * columnsOfB)
    let seconds = Mpi.time () - start

    let start = Mpi.time ()
    let expected = Array.zeroCreate (rows * columnsOfB)
    multiplySequentially a b expected rows columns columnsOfB
    let sequential = Mpi.time () - start
    { Rows = rows; Columns = columns; ColumnsOfB = columnsOfB; Product = c; Workers = languages
      Seconds = seconds; SequentialSeconds = sequential
      MaxError = Array.fold2 (fun worst x y -> max worst (abs (x - y))) 0.0 c expected }

/// Every other rank's part: announces its language, multiplies its rows and returns them.
let worker world (language: string) =
    world |> Mpi.send 0 languageTag language
    let sizes = world |> Mpi.recv<int[]> 0 sizeTag
    let b = world |> Mpi.recv<float[]> 0 bTag
    let a = world |> Mpi.recv<float[]> 0 aTag
    let c = Array.zeroCreate (sizes[0] * sizes[2])
    multiply a b c sizes[0] sizes[1] sizes[2]
    world |> Mpi.send 0 cTag c
