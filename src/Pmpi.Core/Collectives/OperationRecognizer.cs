using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Reflection.Emit;

namespace Pmpi.Collectives;

/// <summary>
/// Tells which predefined operation a reduction delegate is when it was not taken from <see cref="Operation{T}"/>:
/// F#'s <c>(+)</c>, <c>max</c> or <c>&amp;&amp;&amp;</c>, a Visual Basic <c>Function(a, b) a + b</c> or a C# lambda
/// mean MPI_SUM, MPI_MAX or MPI_BAND as much as <see cref="Operation{T}.Add"/> does, and ranks written in different
/// languages must take the same algorithm (docs/architecture.md, Operations). It reads the method's IL, so what it
/// accepts is exact:
/// <list type="bullet">
/// <item>the two arguments and one arithmetic or bitwise instruction (with a narrowing conversion back to the type, or
/// overflow-checked, as Visual Basic compiles integer sums: a sum that would overflow then wraps, as MPI_SUM does);</item>
/// <item>a call of <see cref="Math.Max(double, double)"/> or <see cref="Math.Min(double, double)"/> (or the type's own
/// Max or Min) on the two arguments, or of a static method that is itself one of these forms (F#'s debug build calls
/// FSharp.Core's op_BooleanAnd for <c>(&amp;&amp;)</c>);</item>
/// <item>a choice between the two arguments by comparing them, and nothing else: such a function's result depends only
/// on their order, so calling it on two ordered values tells max from min;</item>
/// <item>on bool, a function without calls, fields or memory, whose four results are its truth table.</item>
/// </list>
/// Anything else, or a method whose IL cannot be read (Native AOT), stays a user's operation.
/// </summary>
internal static class OperationRecognizer
{
    private static readonly ConcurrentDictionary<MethodInfo, PredefinedOperation> Known = new();

    /// <summary>The predefined operation on primitive <typeparamref name="T"/> that <paramref name="op"/> computes, or None.</summary>
    public static PredefinedOperation Recognize<T>(ReductionOperation<T> op)
    {
        if (!typeof(T).IsPrimitive || op.HasSingleTarget is false) return PredefinedOperation.None;
        var method = op.Method;
        if (method.IsStatic && op.Target is not null) return PredefinedOperation.None; // closed over its first argument
        return Known.GetOrAdd(method, static (method, op) => Read(method, op, calls: 0), op);
    }

    /// <summary>How deep a chain of calls on the two arguments is followed (F#'s debug build calls op_BooleanAnd for (&amp;&amp;)).</summary>
    private const int MaxCalls = 2;

    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "A call whose target trimming removed is not resolved, and the operation stays a user's.")]
    private static PredefinedOperation Read<T>(MethodInfo method, ReductionOperation<T> op, int calls)
    {
        if (IsMinOrMax(method, out var direct)) return direct;
        byte[]? il;
        try
        {
            il = method.GetMethodBody()?.GetILAsByteArray();
        }
        catch (Exception e) when (e is InvalidOperationException or NotSupportedException or MemberAccessException)
        {
            return PredefinedOperation.None; // dynamic methods, Native AOT
        }
        if (il is null || !Instructions.TryDecode(il, method.IsStatic, out var code)) return PredefinedOperation.None;

        if (Arithmetic<T>(code) is var arithmetic and not PredefinedOperation.None) return arithmetic;
        if (code is [{ Op: Op.A }, { Op: Op.B }, { Op: Op.Call, Token: var token }, .. var after] && Returns(after))
        {
            try
            {
                // A call of a static (T, T) -> T method on the two arguments computes what that method does.
                return method.Module.ResolveMethod(token, method.DeclaringType?.GetGenericArguments(), method.GetGenericArguments()) is MethodInfo called
                    && called.IsStatic && !called.ContainsGenericParameters && calls < MaxCalls
                    && called.ReturnType == typeof(T) && called.GetParameters() is [{ } first, { } second] && first.ParameterType == typeof(T) && second.ParameterType == typeof(T)
                    ? Read(called, op, calls + 1) : PredefinedOperation.None;
            }
            catch (Exception e) when (e is ArgumentException or BadImageFormatException or NotSupportedException)
            {
                return PredefinedOperation.None;
            }
        }
        if (typeof(T) == typeof(bool)) return code.All(i => i.IsPure) ? TruthTable((ReductionOperation<bool>)(object)op) : PredefinedOperation.None;
        if (code.All(i => i.ComparesOrChooses)) return ByOrder(op);
        return PredefinedOperation.None;
    }

    /// <summary>a op b, then at most a conversion back to <typeparamref name="T"/>, then return.</summary>
    private static PredefinedOperation Arithmetic<T>(List<Instruction> code)
    {
        if (code is not [{ Op: Op.A }, { Op: Op.B }, { Op: Op.Binary, Binary: var binary }, .. var rest]) return PredefinedOperation.None;
        if (rest is [{ Op: Op.Convert, Convert: var to }, .. var after])
        {
            if (to != typeof(T)) return PredefinedOperation.None;
            rest = after;
        }
        if (!Returns(rest)) return PredefinedOperation.None;
        if (typeof(T) == typeof(bool)) return binary is PredefinedOperation.Add or PredefinedOperation.Multiply ? PredefinedOperation.None : binary.OnBool();
        return binary;
    }

    /// <summary>Whether <paramref name="code"/> returns the value on the stack: at once, or (a debug build) through local 0.</summary>
    private static bool Returns(List<Instruction> code) =>
        code is [{ Op: Op.Ret }] or [{ Op: Op.Store }, { Op: Op.Load }, { Op: Op.Ret }] or [{ Op: Op.Store }, { Op: Op.Branch }, { Op: Op.Load }, { Op: Op.Ret }];

    private static bool IsMinOrMax(MethodInfo method, out PredefinedOperation kind)
    {
        kind = PredefinedOperation.None;
        var parameters = method.GetParameters();
        if (!method.IsStatic || parameters.Length != 2 || parameters[0].ParameterType != method.ReturnType || parameters[1].ParameterType != method.ReturnType) return false;
        if (method.DeclaringType != typeof(Math) && method.DeclaringType != method.ReturnType) return false;
        kind = method.Name switch { "Max" => PredefinedOperation.Max, "Min" => PredefinedOperation.Min, _ => PredefinedOperation.None };
        return kind != PredefinedOperation.None;
    }

    /// <summary>
    /// A function that only compares its arguments and chooses: max or min by what it gives for each order of two
    /// values and for equal ones. The values are neither 0 nor 1, which a comparison's result could be.
    /// </summary>
    private static PredefinedOperation ByOrder<T>(ReductionOperation<T> op)
    {
        T low, middle, high;
        try
        {
            (low, middle, high) = ((T)Convert.ChangeType(5, typeof(T)), (T)Convert.ChangeType(7, typeof(T)), (T)Convert.ChangeType(9, typeof(T)));
        }
        catch (InvalidCastException)
        {
            return PredefinedOperation.None; // IntPtr, UIntPtr
        }
        var comparer = EqualityComparer<T>.Default;
        try
        {
            if (!comparer.Equals(op(middle, middle), middle)) return PredefinedOperation.None;
            T up = op(low, high), down = op(high, low);
            if (comparer.Equals(up, high) && comparer.Equals(down, high)) return PredefinedOperation.Max;
            if (comparer.Equals(up, low) && comparer.Equals(down, low)) return PredefinedOperation.Min;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // A function that throws on ordered values is no max or min.
        }
        return PredefinedOperation.None;
    }

    private static PredefinedOperation TruthTable(ReductionOperation<bool> op)
    {
        int table = 0;
        try
        {
            for (int i = 0; i < 4; i++) table |= op((i & 2) != 0, (i & 1) != 0) ? 1 << i : 0;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return PredefinedOperation.None;
        }
        return table switch
        {
            0b1000 => PredefinedOperation.LogicalAnd,
            0b1110 => PredefinedOperation.LogicalOr,
            0b0110 => PredefinedOperation.LogicalXor,
            _ => PredefinedOperation.None,
        };
    }

    // A and B load the first and second argument; Store and Load, local 0 (where debug builds keep a result).
    private enum Op { A, B, Binary, Convert, Call, Ret, Branch, Compare, Constant, Store, Load, Other }

    /// <summary>One decoded instruction: what it is, as far as recognition cares.</summary>
    private readonly record struct Instruction(Op Op, PredefinedOperation Binary = PredefinedOperation.None, Type? Convert = null, int Token = 0)
    {
        /// <summary>Loads an argument, compares, branches or returns: a choice between the arguments.</summary>
        public bool ComparesOrChooses => Op is Op.A or Op.B or Op.Branch or Op.Compare or Op.Ret or Op.Store or Op.Load;

        /// <summary>No call, field, allocation or memory access: a function of the arguments alone.</summary>
        public bool IsPure => Op is not (Op.Call or Op.Other);
    }

    /// <summary>A decoder for the few instructions small reduction methods are made of; anything else is <see cref="Op.Other"/>.</summary>
    private static class Instructions
    {
        public static bool TryDecode(byte[] il, bool isStatic, out List<Instruction> code)
        {
            code = [];
            for (int at = 0; at < il.Length;)
            {
                int value = il[at] == 0xFE && at + 1 < il.Length ? 0xFE00 | il[at + 1] : il[at]; // 0xFE prefixes two-byte opcodes
                at += value > 0xFF ? 2 : 1;
                if (!Opcodes.TryGetValue(value, out var op)) return false;
                int operand = OperandSize(op.OperandType);
                if (operand < 0 || at + operand > il.Length) return false;
                int token = operand == 4 ? BitConverter.ToInt32(il, at) : 0;
                at += operand;
                if (op.Value != OpCodes.Nop.Value) code.Add(Classify(op, isStatic, token));
            }
            return true;
        }

        private static readonly Dictionary<int, OpCode> Opcodes = typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Select(field => (OpCode)field.GetValue(null)!).ToDictionary(op => (int)(ushort)op.Value);

        private static int OperandSize(OperandType type) => type switch
        {
            OperandType.InlineNone => 0,
            OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
            OperandType.InlineVar => 2,
            OperandType.InlineBrTarget or OperandType.InlineI or OperandType.InlineMethod or OperandType.InlineField or OperandType.InlineType
                or OperandType.InlineTok or OperandType.InlineString or OperandType.InlineSig or OperandType.ShortInlineR => 4,
            OperandType.InlineI8 or OperandType.InlineR => 8,
            _ => -1, // switch tables
        };

        private static Instruction Classify(OpCode op, bool isStatic, int token)
        {
            short v = op.Value;
            if (v == OpCodes.Ldarg_0.Value) return new(isStatic ? Op.A : Op.Other);
            if (v == OpCodes.Ldarg_1.Value) return new(isStatic ? Op.B : Op.A);
            if (v == OpCodes.Ldarg_2.Value) return new(isStatic ? Op.Other : Op.B);
            if (v == OpCodes.Ret.Value) return new(Op.Ret);
            if (v == OpCodes.Call.Value) return new(Op.Call, Token: token);
            if (v == OpCodes.Add.Value || v == OpCodes.Add_Ovf.Value || v == OpCodes.Add_Ovf_Un.Value) return new(Op.Binary, PredefinedOperation.Add);
            if (v == OpCodes.Mul.Value || v == OpCodes.Mul_Ovf.Value || v == OpCodes.Mul_Ovf_Un.Value) return new(Op.Binary, PredefinedOperation.Multiply);
            if (v == OpCodes.And.Value) return new(Op.Binary, PredefinedOperation.BitwiseAnd);
            if (v == OpCodes.Or.Value) return new(Op.Binary, PredefinedOperation.BitwiseOr);
            if (v == OpCodes.Xor.Value) return new(Op.Binary, PredefinedOperation.ExclusiveOr);
            if (v == OpCodes.Conv_U1.Value || v == OpCodes.Conv_Ovf_U1.Value || v == OpCodes.Conv_Ovf_U1_Un.Value) return new(Op.Convert, Convert: typeof(byte));
            if (v == OpCodes.Conv_I1.Value || v == OpCodes.Conv_Ovf_I1.Value || v == OpCodes.Conv_Ovf_I1_Un.Value) return new(Op.Convert, Convert: typeof(sbyte));
            if (v == OpCodes.Conv_I2.Value || v == OpCodes.Conv_Ovf_I2.Value || v == OpCodes.Conv_Ovf_I2_Un.Value) return new(Op.Convert, Convert: typeof(short));
            if (v == OpCodes.Conv_U2.Value || v == OpCodes.Conv_Ovf_U2.Value || v == OpCodes.Conv_Ovf_U2_Un.Value) return new(Op.Convert, Convert: typeof(ushort));
            if (op.FlowControl == FlowControl.Cond_Branch || op.FlowControl == FlowControl.Branch) return new(Op.Branch);
            if (v == OpCodes.Ceq.Value || v == OpCodes.Cgt.Value || v == OpCodes.Cgt_Un.Value || v == OpCodes.Clt.Value || v == OpCodes.Clt_Un.Value) return new(Op.Compare);
            if (op.OpCodeType == OpCodeType.Macro && op.Name!.StartsWith("ldc.i4", StringComparison.Ordinal) || v == OpCodes.Ldc_I4_S.Value || v == OpCodes.Ldc_I4.Value) return new(Op.Constant);
            if (v == OpCodes.Stloc_0.Value) return new(Op.Store);
            if (v == OpCodes.Ldloc_0.Value) return new(Op.Load);
            return new(Op.Other);
        }
    }
}
