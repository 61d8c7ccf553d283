using System.Numerics;

namespace Pmpi;

/// <summary>
/// The predefined operations on the primitive types, written with their operators: what <see cref="Operation{T}"/>
/// gives for them. Each is the expression the other types compile (<c>first + second</c>, <c>first &lt; second ?
/// first : second</c>, ...), so results and wrapping are the same; an operation a type lacks (a bitwise one on
/// double, a sum of bools) is null here and refused where types are compiled.
/// </summary>
internal static class PrimitiveOperations
{
    /// <summary><paramref name="kind"/> on <typeparamref name="T"/>, or null if <typeparamref name="T"/> is not a primitive that has it.</summary>
    public static ReductionOperation<T>? For<T>(PredefinedOperation kind) => (
        typeof(T) == typeof(double) ? Floating<double>(kind)
        : typeof(T) == typeof(float) ? Floating<float>(kind)
        : typeof(T) == typeof(int) ? Integer<int>(kind)
        : typeof(T) == typeof(long) ? Integer<long>(kind)
        : typeof(T) == typeof(uint) ? Integer<uint>(kind)
        : typeof(T) == typeof(ulong) ? Integer<ulong>(kind)
        : typeof(T) == typeof(short) ? Integer<short>(kind)
        : typeof(T) == typeof(ushort) ? Integer<ushort>(kind)
        : typeof(T) == typeof(byte) ? Integer<byte>(kind)
        : typeof(T) == typeof(sbyte) ? Integer<sbyte>(kind)
        : typeof(T) == typeof(char) ? Integer<char>(kind)
        : typeof(T) == typeof(nint) ? Integer<nint>(kind)
        : typeof(T) == typeof(nuint) ? Integer<nuint>(kind)
        : typeof(T) == typeof(bool) ? Logical(kind)
        : (Delegate?)null) as ReductionOperation<T>;

    private static Delegate? Floating<T>(PredefinedOperation kind) where T : INumber<T> => kind switch
    {
        PredefinedOperation.Add => (ReductionOperation<T>)((first, second) => first + second),
        PredefinedOperation.Multiply => (ReductionOperation<T>)((first, second) => first * second),
        PredefinedOperation.Min => (ReductionOperation<T>)((first, second) => first < second ? first : second),
        PredefinedOperation.Max => (ReductionOperation<T>)((first, second) => first > second ? first : second),
        _ => null,
    };

    // Narrow integers wrap, as C# (and the expressions, which widen to int and narrow back) do.
    private static Delegate? Integer<T>(PredefinedOperation kind) where T : IBinaryInteger<T> => kind switch
    {
        PredefinedOperation.BitwiseAnd => (ReductionOperation<T>)((first, second) => first & second),
        PredefinedOperation.BitwiseOr => (ReductionOperation<T>)((first, second) => first | second),
        PredefinedOperation.ExclusiveOr => (ReductionOperation<T>)((first, second) => first ^ second),
        _ => Floating<T>(kind),
    };

    private static Delegate? Logical(PredefinedOperation kind) => kind switch
    {
        PredefinedOperation.LogicalAnd or PredefinedOperation.BitwiseAnd => (ReductionOperation<bool>)((first, second) => first && second),
        PredefinedOperation.LogicalOr or PredefinedOperation.BitwiseOr => (ReductionOperation<bool>)((first, second) => first || second),
        PredefinedOperation.LogicalXor or PredefinedOperation.ExclusiveOr => (ReductionOperation<bool>)((first, second) => first != second),
        _ => null,
    };
}
