using System.Linq.Expressions;
using Pmpi.Collectives;

namespace Pmpi;

/// <summary>
/// Combines two values in a reduction. Collectives apply it in rank order, <c>op(lower, higher)</c>, so an operation
/// need not be commutative, only associative (MPI-4.1 §6.9.1). The predefined commutative operations on primitive
/// types (<see cref="Operation{T}.IsCommutative"/>) may be combined in another grouping, by node and domain, as MPI
/// allows; floating-point sums may then differ from rank order in their last bits, identically on every rank.
/// </summary>
public delegate T ReductionOperation<T>(T first, T second);

/// <summary>
/// The predefined reductions (MPI_SUM, MPI_PROD, MPI_MIN, ...) for any <typeparamref name="T"/> that supports them:
/// primitives, user structs with the matching operators, strings (<see cref="Add"/> concatenates). Each is compiled
/// once per type; asking for one the type lacks throws <see cref="ErrorClass.InvalidArgument"/> naming the type.
/// </summary>
public static class Operation<T>
{
    // Primitives take the operators themselves (PrimitiveOperations): compiling an expression tree costs a rank's first
    // reduction tens of milliseconds, and under Native AOT it runs interpreted. Other types compile their operators.
    private static readonly Lazy<ReductionOperation<T>> AddOp = new(() =>
        typeof(T) == typeof(string) ? (ReductionOperation<T>)(object)(ReductionOperation<string>)string.Concat
        : PrimitiveOperations.For<T>(PredefinedOperation.Add) ?? Binary(nameof(Add), Expression.Add));
    private static readonly Lazy<ReductionOperation<T>> MultiplyOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.Multiply) ?? Binary(nameof(Multiply), Expression.Multiply));
    private static readonly Lazy<ReductionOperation<T>> MinOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.Min) ?? Select(nameof(Min), Expression.LessThan, preferNegative: true));
    private static readonly Lazy<ReductionOperation<T>> MaxOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.Max) ?? Select(nameof(Max), Expression.GreaterThan, preferNegative: false));
    private static readonly Lazy<ReductionOperation<T>> LogicalAndOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.LogicalAnd) ?? Binary(nameof(LogicalAnd), Expression.AndAlso));
    private static readonly Lazy<ReductionOperation<T>> LogicalOrOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.LogicalOr) ?? Binary(nameof(LogicalOr), Expression.OrElse));
    private static readonly Lazy<ReductionOperation<T>> LogicalXorOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.LogicalXor) ?? throw NotDefined(nameof(LogicalXor), null));
    private static readonly Lazy<ReductionOperation<T>> BitwiseAndOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.BitwiseAnd) ?? Binary(nameof(BitwiseAnd), Expression.And));
    private static readonly Lazy<ReductionOperation<T>> BitwiseOrOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.BitwiseOr) ?? Binary(nameof(BitwiseOr), Expression.Or));
    private static readonly Lazy<ReductionOperation<T>> ExclusiveOrOp = new(() =>
        PrimitiveOperations.For<T>(PredefinedOperation.ExclusiveOr) ?? Binary(nameof(ExclusiveOr), Expression.ExclusiveOr));
    private static readonly (Lazy<ReductionOperation<T>> Operation, PredefinedOperation Kind)[] Kinds =
    [
        (AddOp, PredefinedOperation.Add), (MultiplyOp, PredefinedOperation.Multiply), (MinOp, PredefinedOperation.Min), (MaxOp, PredefinedOperation.Max),
        (LogicalAndOp, PredefinedOperation.LogicalAnd), (LogicalOrOp, PredefinedOperation.LogicalOr), (LogicalXorOp, PredefinedOperation.LogicalXor),
        (BitwiseAndOp, PredefinedOperation.BitwiseAnd), (BitwiseOrOp, PredefinedOperation.BitwiseOr), (ExclusiveOrOp, PredefinedOperation.ExclusiveOr),
    ];

    /// <summary>Sum (MPI_SUM); string concatenation for strings.</summary>
    public static ReductionOperation<T> Add => AddOp.Value;

    /// <summary>Product (MPI_PROD).</summary>
    public static ReductionOperation<T> Multiply => MultiplyOp.Value;

    /// <summary>Minimum (MPI_MIN), by the &lt; operator or else <see cref="IComparable{T}"/>.</summary>
    public static ReductionOperation<T> Min => MinOp.Value;

    /// <summary>Maximum (MPI_MAX), by the &gt; operator or else <see cref="IComparable{T}"/>.</summary>
    public static ReductionOperation<T> Max => MaxOp.Value;

    /// <summary>Logical and (MPI_LAND), for bool.</summary>
    public static ReductionOperation<T> LogicalAnd => LogicalAndOp.Value;

    /// <summary>Logical or (MPI_LOR), for bool.</summary>
    public static ReductionOperation<T> LogicalOr => LogicalOrOp.Value;

    /// <summary>Logical exclusive or (MPI_LXOR), for bool.</summary>
    public static ReductionOperation<T> LogicalXor => LogicalXorOp.Value;

    /// <summary>Bitwise and (MPI_BAND).</summary>
    public static ReductionOperation<T> BitwiseAnd => BitwiseAndOp.Value;

    /// <summary>Bitwise or (MPI_BOR).</summary>
    public static ReductionOperation<T> BitwiseOr => BitwiseOrOp.Value;

    /// <summary>Bitwise exclusive or (MPI_BXOR).</summary>
    public static ReductionOperation<T> ExclusiveOr => ExclusiveOrOp.Value;

    /// <summary>
    /// Whether <paramref name="op"/> is one of the predefined operations (<see cref="KindOf"/>) on a primitive type (or
    /// decimal), all of which commute: sum, product, min, max and the logical and bitwise ones. A user's operation, or
    /// a predefined one on a user's type (whose operator may not commute, such as a matrix product), is not known to be.
    /// </summary>
    public static bool IsCommutative(ReductionOperation<T> op) =>
        (typeof(T).IsPrimitive || typeof(T) == typeof(decimal)) && KindOf(op) != PredefinedOperation.None;

    /// <summary>
    /// Which predefined operation <paramref name="op"/> is: one of this class's, or on a primitive type a delegate
    /// that computes one (F#'s <c>(+)</c>, a lambda <c>(a, b) =&gt; a + b</c>: <see cref="OperationRecognizer"/>), so
    /// that ranks in every language name the same operation alike. On bool the bitwise operations are the logical ones.
    /// </summary>
    internal static PredefinedOperation KindOf(ReductionOperation<T> op)
    {
        foreach (var (predefined, kind) in Kinds)
        {
            if (predefined.IsValueCreated && predefined.Value == op) return typeof(T) == typeof(bool) ? kind.OnBool() : kind;
        }
        return OperationRecognizer.Recognize(op);
    }

    // Expression trees have no arithmetic on the narrow integers; widen to int, then narrow back (wrapping, as C# does).
    private static bool IsNarrow => Type.GetTypeCode(typeof(T)) is TypeCode.Byte or TypeCode.SByte or TypeCode.Int16 or TypeCode.UInt16 or TypeCode.Char;

    private static ReductionOperation<T> Binary(string name, Func<Expression, Expression, BinaryExpression> make)
    {
        var (first, second) = (Expression.Parameter(typeof(T), "first"), Expression.Parameter(typeof(T), "second"));
        try
        {
            Expression body = IsNarrow
                ? Expression.Convert(make(Expression.Convert(first, typeof(int)), Expression.Convert(second, typeof(int))), typeof(T))
                : make(first, second);
            return Expression.Lambda<ReductionOperation<T>>(body, first, second).Compile();
        }
        catch (InvalidOperationException e)
        {
            throw NotDefined(name, e);
        }
    }

    private static ReductionOperation<T> Select(string name, Func<Expression, Expression, BinaryExpression> compare, bool preferNegative)
    {
        var (first, second) = (Expression.Parameter(typeof(T), "first"), Expression.Parameter(typeof(T), "second"));
        try
        {
            Expression test = IsNarrow
                ? compare(Expression.Convert(first, typeof(int)), Expression.Convert(second, typeof(int)))
                : compare(first, second);
            return Expression.Lambda<ReductionOperation<T>>(Expression.Condition(test, first, second), first, second).Compile();
        }
        catch (InvalidOperationException) when (typeof(IComparable<T>).IsAssignableFrom(typeof(T)))
        {
            var comparer = Comparer<T>.Default;
            return preferNegative
                ? (a, b) => comparer.Compare(a, b) <= 0 ? a : b
                : (a, b) => comparer.Compare(a, b) >= 0 ? a : b;
        }
        catch (InvalidOperationException e)
        {
            throw NotDefined(name, e);
        }
    }

    private static MpiException NotDefined(string name, Exception? inner) =>
        new(ErrorClass.InvalidArgument, $"Operation {name} is not defined for {typeof(T).FullName}: give it the operator, or pass your own ReductionOperation<T>.", inner);
}

/// <summary>
/// The predefined operations (MPI_SUM, ...), None for a user's: what ranks compare to agree on an operation, and
/// what an element-wise reduction runs as SIMD (all but the logical ones).
/// </summary>
internal enum PredefinedOperation
{
    None,
    Add,
    Multiply,
    Min,
    Max,
    BitwiseAnd,
    BitwiseOr,
    ExclusiveOr,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
}

internal static class PredefinedOperations
{
    /// <summary>The operation <paramref name="kind"/> is on bool, where and, or and exclusive or are the logical ones.</summary>
    public static PredefinedOperation OnBool(this PredefinedOperation kind) => kind switch
    {
        PredefinedOperation.BitwiseAnd => PredefinedOperation.LogicalAnd,
        PredefinedOperation.BitwiseOr => PredefinedOperation.LogicalOr,
        PredefinedOperation.ExclusiveOr => PredefinedOperation.LogicalXor,
        _ => kind,
    };
}
