using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Pmpi.Matching;

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
        return new ElementwiseOperation<T>(op).Combine;
    }

    /// <summary>
    /// <paramref name="into"/>[i] = <paramref name="op"/>(<paramref name="first"/>[i], <paramref name="second"/>[i]);
    /// <paramref name="into"/> may be either input. The spans have one length.
    /// </summary>
    public static void Combine<T>(ReadOnlySpan<T> first, ReadOnlySpan<T> second, Span<T> into, ReductionOperation<T> op, PredefinedOperation kind)
    {
        // The vector loop reads and writes unchecked.
        if (first.Length != into.Length || second.Length != into.Length) throw new ArgumentException("The spans differ in length.");
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
        ref var a = ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(first));
        ref var b = ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(second));
        ref var c = ref Unsafe.As<T, TNumber>(ref MemoryMarshal.GetReference(into));
        var end = (nuint)(into.Length - into.Length % Vector<TNumber>.Count);
        switch (kind)
        {
            case PredefinedOperation.Add: Loop<TNumber, Add<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.Multiply: Loop<TNumber, Multiply<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.Min: Loop<TNumber, Min<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.Max: Loop<TNumber, Max<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.BitwiseAnd: Loop<TNumber, BitwiseAnd<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.BitwiseOr: Loop<TNumber, BitwiseOr<TNumber>>(ref a, ref b, ref c, end); break;
            case PredefinedOperation.ExclusiveOr: Loop<TNumber, ExclusiveOr<TNumber>>(ref a, ref b, ref c, end); break;
            default: throw new UnreachableException();
        }
        return (int)end;
    }

    /// <summary>
    /// The loop over whole vectors, one per operation: the operation is chosen once, outside, and the loads and stores
    /// are unchecked (<see cref="Combine{T}"/> checked the lengths). Choosing it per vector, with a checked slice per
    /// load and store, took twice as long (512 KB of doubles added in place: 23 against 11 µs, fully optimized).
    /// </summary>
    private static void Loop<TNumber, TOperation>(ref TNumber a, ref TNumber b, ref TNumber c, nuint end)
        where TNumber : struct, INumber<TNumber>
        where TOperation : IVectorOperation<TNumber>
    {
        for (nuint i = 0; i < end; i += (nuint)Vector<TNumber>.Count)
            TOperation.Invoke(Vector.LoadUnsafe(ref a, i), Vector.LoadUnsafe(ref b, i)).StoreUnsafe(ref c, i);
    }

    private interface IVectorOperation<TNumber> where TNumber : struct
    {
        static abstract Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y);
    }

    private readonly struct Add<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => x + y;
    }

    private readonly struct Multiply<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => x * y;
    }

    // As Operation<T>: first < second ? first : second, and first > second ? first : second (NaN included).
    private readonly struct Min<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => Vector.ConditionalSelect(Vector.LessThan(x, y), x, y);
    }

    private readonly struct Max<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => Vector.ConditionalSelect(Vector.GreaterThan(x, y), x, y);
    }

    private readonly struct BitwiseAnd<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => x & y;
    }

    private readonly struct BitwiseOr<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => x | y;
    }

    private readonly struct ExclusiveOr<TNumber> : IVectorOperation<TNumber> where TNumber : struct
    {
        public static Vector<TNumber> Invoke(Vector<TNumber> x, Vector<TNumber> y) => x ^ y;
    }
}

/// <summary>An element-wise operation on arrays, which keeps the operation on elements it was made of (<see cref="OperationCode"/>).</summary>
internal abstract class ElementwiseOperation
{
    /// <summary>The element operation's field in a collective's tag.</summary>
    public abstract int Code { get; }

    /// <summary>Whether the element operation commutes (<see cref="Operation{T}.IsCommutative"/>).</summary>
    public abstract bool Commutes { get; }
}

internal sealed class ElementwiseOperation<T>(ReductionOperation<T> op) : ElementwiseOperation
{
    private readonly PredefinedOperation _kind = Operation<T>.KindOf(op);

    public override int Code => OperationCode.Of(_kind);

    public override bool Commutes => Operation<T>.IsCommutative(op);

    public T[] Combine(T[] first, T[] second)
    {
        if (first.Length != second.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"Element-wise reduction of arrays of different lengths ({first.Length} and {second.Length}).");
        var result = GC.AllocateUninitializedArray<T>(first.Length);
        Elementwise.Combine(first, second, result, op, _kind);
        return result;
    }
}

/// <summary>The operation field of a collective's tag (<see cref="CollectiveTag"/>).</summary>
internal static class OperationCode
{
    /// <summary>The predefined operation <paramref name="op"/> is (element by element, for an array's), or a user's.</summary>
    public static int Of<T>(ReductionOperation<T> op) =>
        op.Target is ElementwiseOperation elementwise ? elementwise.Code : Of(Operation<T>.KindOf(op));

    /// <summary>The field for an operation of <paramref name="kind"/>: the predefined one, or a user's for None.</summary>
    public static int Of(PredefinedOperation kind) => kind == PredefinedOperation.None ? CollectiveTag.UserOperation : (int)kind;
}
