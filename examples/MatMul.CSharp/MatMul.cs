using System.Globalization;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace Pmpi.Examples.CSharp;

/// <summary>What the master measured: the product, the time of the distributed multiply and of the sequential one, and the largest difference.</summary>
public sealed record MatMulResult(int Rows, int Columns, int ColumnsOfB, double[] Product, string[] Workers, double Seconds, double SequentialSeconds, double MaxError)
{
    /// <summary>The master's report, one line per worker then the result line.</summary>
    public IEnumerable<string> Report(string masterLanguage)
    {
        for (int w = 0; w < Workers.Length; w++) yield return $"worker {w + 1}: {Workers[w]}";
        yield return string.Create(CultureInfo.InvariantCulture,
            $"C = A({Rows}x{Columns}) x B({Columns}x{ColumnsOfB}) by a master in {masterLanguage} and {Workers.Length} workers in {Seconds:F3} s (sequential {SequentialSeconds:F3} s), max abs error {MaxError:E2}, sum of C {Product.Sum():R}");
    }
}

/// <summary>
/// The master/worker matrix multiply of the PMPI paper. The protocol every language's version speaks: each worker
/// sends its language name (tag 0); the master sends each worker its share as int[] {rows, columns, columnsOfB}
/// (tag 1), then all of B (tag 2), then its consecutive rows of A (tag 3); the worker returns its rows of C (tag 4).
/// Matrices are row-major double[]; rows are shared out evenly, the first rows % workers workers taking one more.
/// </summary>
public static class MatMul
{
    /// <summary>The largest difference from the sequential product that counts as correct.</summary>
    public const double Tolerance = 1e-9;

    private const int LanguageTag = 0, SizeTag = 1, BTag = 2, ATag = 3, CTag = 4;

    /// <summary>The sizes (default: the paper's 2400 × 1200 times 1200 × 500) and the optional --label.</summary>
    public static (int[] Sizes, string? Label) ParseArguments(string[] args)
    {
        int[] sizes = [2400, 1200, 500];
        string? label = null;
        int position = 0;
        for (int i = 0; i < args.Length; i++)
        {
            if (args[i] == "--label" && i + 1 < args.Length) label = args[++i];
            else if (position < 3 && int.TryParse(args[i], NumberStyles.None, CultureInfo.InvariantCulture, out var size) && size > 0) sizes[position++] = size;
            else throw new ArgumentException($"Unexpected argument '{args[i]}': expected rows, columns and columns of B (positive numbers), and --label text.");
        }
        return (sizes, label);
    }

    /// <summary>An element of A, from a formula every language's version shares.</summary>
    public static double ElementOfA(int row, int column) => (row * 31 + column * 17) % 101 / 101.0 - 0.5;

    /// <summary>An element of B.</summary>
    public static double ElementOfB(int row, int column) => (row * 13 + column * 7) % 37 / 37.0 - 0.25;

    /// <summary>Rank 0's part: distributes the work, assembles C and checks it against a sequential product.</summary>
    public static MatMulResult Master(Intracommunicator world, int rows, int columns, int columnsOfB)
    {
        var a = Fill(rows, columns, ElementOfA);
        var b = Fill(columns, columnsOfB, ElementOfB);
        int workers = world.Size - 1;
        var languages = new string[workers];
        for (int w = 1; w <= workers; w++) languages[w - 1] = world.Receive<string>(w, LanguageTag);

        double start = Environment.Time;
        var c = new double[rows * columnsOfB];
        if (workers == 0) Multiply(a, b, c, rows, columns, columnsOfB);
        for (int w = 1; w <= workers; w++)
        {
            int first = FirstRow(rows, workers, w), count = Share(rows, workers, w);
            world.Send(new[] { count, columns, columnsOfB }, w, SizeTag);
            world.Send(b, w, BTag);
            world.Send(a[(first * columns)..((first + count) * columns)], w, ATag);
        }
        for (int w = 1; w <= workers; w++)
            world.Receive<double[]>(w, CTag).CopyTo(c, FirstRow(rows, workers, w) * columnsOfB);
        double seconds = Environment.Time - start;

        start = Environment.Time;
        var expected = new double[rows * columnsOfB];
        MultiplySequentially(a, b, expected, rows, columns, columnsOfB);
        double sequential = Environment.Time - start;
        double maxError = 0;
        for (int i = 0; i < c.Length; i++) maxError = Math.Max(maxError, Math.Abs(c[i] - expected[i]));
        return new MatMulResult(rows, columns, columnsOfB, c, languages, seconds, sequential, maxError);
    }

    /// <summary>Every other rank's part: announces its language, multiplies its rows and returns them.</summary>
    public static void Worker(Intracommunicator world, string language)
    {
        world.Send(language, 0, LanguageTag);
        var sizes = world.Receive<int[]>(0, SizeTag);
        var b = world.Receive<double[]>(0, BTag);
        var a = world.Receive<double[]>(0, ATag);
        var c = new double[sizes[0] * sizes[2]];
        Multiply(a, b, c, sizes[0], sizes[1], sizes[2]);
        world.Send(c, 0, CTag);
    }

    /// <summary>C += A × B, row by row in i-k-j order so the inner loop runs along rows of B and C, a vector at a time.</summary>
    // Called once per rank: optimised at once rather than started as tier-0 code and patched by on-stack replacement.
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void Multiply(double[] a, double[] b, double[] c, int rows, int columns, int columnsOfB)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(a.Length, rows * columns);
        ArgumentOutOfRangeException.ThrowIfLessThan(b.Length, columns * columnsOfB);
        ArgumentOutOfRangeException.ThrowIfLessThan(c.Length, rows * columnsOfB);
        // The lengths were checked above, so the rows are read through references without a bounds check per vector.
        ref double b0 = ref MemoryMarshal.GetArrayDataReference(b);
        ref double c0 = ref MemoryMarshal.GetArrayDataReference(c);
        for (int i = 0; i < rows; i++)
        {
            ref double rowOfC = ref Unsafe.Add(ref c0, i * columnsOfB);
            for (int k = 0; k < columns; k++)
                AddScaled(ref rowOfC, a[i * columns + k], ref Unsafe.Add(ref b0, k * columnsOfB), columnsOfB);
        }
    }

    // row += scale × other over length elements: 512-bit vectors where the processor has them, then Vector<T>, then
    // one at a time, with fused multiply-adds (what a C compiler's vectoriser makes of the loop with -O3 -march=native).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void AddScaled(ref double row, double scale, ref double other, int length)
    {
        nuint j = 0, end = (nuint)length;
        if (Vector512.IsHardwareAccelerated)
        {
            var scales = Vector512.Create(scale);
            for (; j + (nuint)Vector512<double>.Count <= end; j += (nuint)Vector512<double>.Count)
                Vector512.FusedMultiplyAdd(scales, Vector512.LoadUnsafe(ref other, j), Vector512.LoadUnsafe(ref row, j)).StoreUnsafe(ref row, j);
        }
        var scaled = new Vector<double>(scale);
        for (; j + (nuint)Vector<double>.Count <= end; j += (nuint)Vector<double>.Count)
            Vector.FusedMultiplyAdd(scaled, Vector.LoadUnsafe(ref other, j), Vector.LoadUnsafe(ref row, j)).StoreUnsafe(ref row, j);
        for (; j < end; j++) Unsafe.Add(ref row, j) = Math.FusedMultiplyAdd(scale, Unsafe.Add(ref other, j), Unsafe.Add(ref row, j));
    }

    private static void MultiplySequentially(double[] a, double[] b, double[] c, int rows, int columns, int columnsOfB)
    {
        for (int i = 0; i < rows; i++)
            for (int k = 0; k < columns; k++)
                for (int j = 0; j < columnsOfB; j++)
                    c[i * columnsOfB + j] += a[i * columns + k] * b[k * columnsOfB + j];
    }

    private static int Share(int rows, int workers, int worker) => rows / workers + (worker - 1 < rows % workers ? 1 : 0);

    private static int FirstRow(int rows, int workers, int worker) => (worker - 1) * (rows / workers) + Math.Min(worker - 1, rows % workers);

    private static double[] Fill(int rows, int columns, Func<int, int, double> element)
    {
        var matrix = new double[rows * columns];
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < columns; j++)
                matrix[i * columns + j] = element(i, j);
        return matrix;
    }
}
