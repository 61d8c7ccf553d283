using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Pmpi.Collectives;

/// <summary>
/// Combining arrays element by element, as reductions of buffers do (MPI_SUM over a vector): a predefined operation
/// on a primitive numeric type runs over whole SIMD registers (<see cref="Vector{T}"/>); any other operation is
/// called once per element. Each element's result is the one the operation itself gives: sums and products are
/// per-element IEEE operations either way, and min and max select by the same comparison as <see cref="Operation{T}"/>.
/// </summary>
internal static class Elementwise
{
    /// <summary>The operation on arrays that <paramref name="op"/> makes element by element; it returns a new array.</summary>
    public static ReductionOperation<T[]> Of<T>(ReductionOperation<T> op)
    {
        ArgumentNullException.ThrowIfNull(op);
        var kind = Operation<T>.KindOf(op);
        return (first, second) =>
        {
            if (first.Length != second.Length)
                throw new MpiException(ErrorClass.InvalidCount, $"Element-wise reduction of arrays of different lengths ({first.Length} and {second.Length}).");
            var result = GC.AllocateUninitializedArray<T>(first.Length);
            Combine(first, second, result, op, kind);
            return result;
        };
    }

    /// <summary>
    /// <paramref name="into"/>[i] = <paramref name="op"/>(<paramref name="first"/>[i], <paramref name="second"/>[i]);
    /// <paramref name="into"/> may be either input. The spans have one length.
    /// </summary>
    public static void Combine<T>(ReadOnlySpan<T> first, ReadOnlySpan<T> second, Span<T> into, ReductionOperation<T> op, PredefinedOperation kind)
    {
        int done = kind == PredefinedOperation.None ? 0
            : typeof(T) == typeof(double) ? Vectorized<T, double>(first, second, into, kind)
            : typeof(T) == typeof(float) ? Vectorized<T, float>(first, second, into, kind)
            : typeof(T) == typeof(int) ? Vectorized<T, int>(first, second, into, kind)
            : typeof(T) == typeof(long) ? Vectorized<T, long>(first, second, into, kind)
            : typeof(T) == typeof(uint) ? Vectorized<T, uint>(first, second, into, kind)
            : typeof(T) == typeof(ulong) ? Vectorized<T, ulong>(first, second, into, kind)
            : typeof(T) == typeof(short) ? Vectorized<T, short>(first, second, into, kind)
            : typeof(T) == typeof(ushort) ? Vectorized<T, ushort>(first, second, into, kind)
            : typeof(T) == typeof(byte) ? Vectorized<T, byte>(first, second, into, kind)
            : typeof(T) == typeof(sbyte) ? Vectorized<T, sbyte>(first, second, into, kind)
            : 0;
        for (int i = done; i < into.Length; i++) into[i] = op(first[i], second[i]);
    }

    /// <summary>Combines whole vectors of <typeparamref name="TNumber"/> (which <typeparamref name="T"/> is); how many elements it did.</summary>
    private static int Vectorized<T, TNumber>(ReadOnlySpan<T> first, ReadOnlySpan<T> second, Span<T> into, PredefinedOperation kind)
        where TNumber : struct, INumber<TNumber>
    {
        if (!Vector.IsHardwareAccelerated) return 0;
        var a = MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(first)), first.Length);
        var b = MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(second)), second.Length);
        var c = MemoryMarshal.CreateSpan(ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(into)), into.Length);
        int width = Vector<TNumber>.Count, end = c.Length - c.Length % width;
        for (int i = 0; i < end; i += width)
        {
            var x = new Vector<TNumber>(a[i..]);
            var y = new Vector<TNumber>(b[i..]);
            var result = kind switch
            {
                PredefinedOperation.Add => x + y,
                PredefinedOperation.Multiply => x * y,
                // As Operation<T>: first < second ? first : second, and first > second ? first : second (NaN included).
                PredefinedOperation.Min => Vector.ConditionalSelect(Vector.LessThan(x, y), x, y),
                PredefinedOperation.Max => Vector.ConditionalSelect(Vector.GreaterThan(x, y), x, y),
                PredefinedOperation.BitwiseAnd => x & y,
                PredefinedOperation.BitwiseOr => x | y,
                PredefinedOperation.ExclusiveOr => x ^ y,
                _ => throw new UnreachableException(),
            };
            result.CopyTo(c[i..]);
        }
        return end;
    }
}
