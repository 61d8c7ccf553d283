namespace Pmpi.Tests.Collectives;

/// <summary>A user unmanaged struct with the operators <see cref="Operation{T}.Add"/> and <see cref="Operation{T}.Multiply"/> need.</summary>
public readonly record struct Vector2D(double X, double Y)
{
    public static Vector2D operator +(Vector2D first, Vector2D second) => new(first.X + second.X, first.Y + second.Y);

    public static Vector2D operator *(Vector2D first, Vector2D second) => new(first.X * second.X, first.Y * second.Y);
}

/// <summary>A 2x2 integer matrix: its product is associative but not commutative, so it exposes any reordering.</summary>
public readonly record struct Matrix2(long A, long B, long C, long D)
{
    public static Matrix2 Multiply(Matrix2 first, Matrix2 second) => new(
        first.A * second.A + first.B * second.C, first.A * second.B + first.B * second.D,
        first.C * second.A + first.D * second.C, first.C * second.B + first.D * second.D);
}

/// <summary>Per-rank inputs and their sequential reductions, the reference every collective is checked against.</summary>
internal static class Data
{
    public static int Int(int rank) => rank * 3 - 5;

    public static double Double(int rank) => rank * 0.5 + 0.25;

    public static Vector2D Vector(int rank) => new(rank + 1, -2.0 * rank);

    /// <summary>"0", ",1", ",2", ...: concatenated in rank order they read "0,1,2,...".</summary>
    public static string Text(int rank) => rank == 0 ? "0" : $",{rank}";

    /// <summary>[[r + 1, 1], [1, 0]]: products of these depend on the order of the factors.</summary>
    public static Matrix2 Matrix(int rank) => new(rank + 1, 1, 1, 0);

    public static int[] IntArray(int rank, int length = 5) => [.. Enumerable.Range(0, length).Select(i => rank * 10 + i)];

    public static string[] TextArray(int rank, int length = 3) => [.. Enumerable.Range(0, length).Select(i => $"{rank}.{i}")];

    /// <summary>The numbers 0, 1, 2, 0, 1, 2, ...: variable block lengths that include zero.</summary>
    public static int Count(int rank) => rank % 3;

    /// <summary>"0,1,...,last".</summary>
    public static string TextUpTo(int last) => string.Join(",", Enumerable.Range(0, last + 1));

    /// <summary>The values of ranks 0..<paramref name="count"/> - 1 folded left to right.</summary>
    public static T Fold<T>(int count, Func<int, T> valueOf, Func<T, T, T> combine) =>
        Enumerable.Range(0, count).Select(valueOf).Aggregate(combine);
}
