namespace Pmpi.Tests.Collectives;

/// <summary>
/// Which delegates name a predefined operation (<see cref="Operation{T}.KindOf"/>): Operation's own, and lambdas or
/// methods that compute one exactly; anything that computes something else, or might, stays a user's operation.
/// The F# and Visual Basic forms are tested in their binding's suites.
/// </summary>
public sealed class OperationRecognizerTests
{
    [Fact]
    public void KindOf_OperationsOwn_AreTheirKind()
    {
        Assert.Equal(PredefinedOperation.Add, Operation<double>.KindOf(Operation<double>.Add));
        Assert.Equal(PredefinedOperation.Max, Operation<int>.KindOf(Operation<int>.Max));
        Assert.Equal(PredefinedOperation.LogicalAnd, Operation<bool>.KindOf(Operation<bool>.BitwiseAnd)); // one operation on bool
        Assert.Equal(PredefinedOperation.Add, Operation<string>.KindOf(Operation<string>.Add));
    }

    [Fact]
    public void KindOf_ArithmeticAndBitwiseLambdas_AreTheOperation()
    {
        Assert.Equal(PredefinedOperation.Add, Operation<double>.KindOf((a, b) => a + b));
        Assert.Equal(PredefinedOperation.Multiply, Operation<long>.KindOf((a, b) => a * b));
        Assert.Equal(PredefinedOperation.Add, Operation<int>.KindOf((a, b) => checked(a + b)));
        Assert.Equal(PredefinedOperation.Add, Operation<byte>.KindOf((a, b) => unchecked((byte)(a + b))));
        Assert.Equal(PredefinedOperation.BitwiseAnd, Operation<uint>.KindOf((a, b) => a & b));
        Assert.Equal(PredefinedOperation.ExclusiveOr, Operation<ulong>.KindOf((a, b) => a ^ b));
        Assert.Equal(PredefinedOperation.LogicalOr, Operation<bool>.KindOf((a, b) => a | b));
    }

    [Fact]
    public void KindOf_MinAndMax_ByCallOrByComparison()
    {
        Assert.Equal(PredefinedOperation.Max, Operation<double>.KindOf(Math.Max));
        Assert.Equal(PredefinedOperation.Min, Operation<int>.KindOf((a, b) => Math.Min(a, b)));
        Assert.Equal(PredefinedOperation.Max, Operation<float>.KindOf((a, b) => float.Max(a, b)));
        Assert.Equal(PredefinedOperation.Max, Operation<int>.KindOf((a, b) => a > b ? a : b));
        Assert.Equal(PredefinedOperation.Min, Operation<long>.KindOf((a, b) => a <= b ? a : b));
        Assert.Equal(PredefinedOperation.Min, Operation<double>.KindOf((a, b) => b < a ? b : a));
    }

    [Fact]
    public void KindOf_ShortCircuitLogic_ByTruthTable()
    {
        Assert.Equal(PredefinedOperation.LogicalAnd, Operation<bool>.KindOf((a, b) => a && b));
        Assert.Equal(PredefinedOperation.LogicalOr, Operation<bool>.KindOf((a, b) => a || b));
        Assert.Equal(PredefinedOperation.LogicalXor, Operation<bool>.KindOf((a, b) => a != b));
        Assert.Equal(PredefinedOperation.None, Operation<bool>.KindOf((a, b) => a && !b));
    }

    [Fact]
    public void KindOf_AnythingElse_IsAUsersOperation()
    {
        int calls = 0;
        Assert.Equal(PredefinedOperation.None, Operation<double>.KindOf((a, b) => a - b));
        Assert.Equal(PredefinedOperation.None, Operation<double>.KindOf((a, b) => a + b + 1));
        Assert.Equal(PredefinedOperation.None, Operation<int>.KindOf((a, b) => b + a > 0 ? a : b));          // compares with a constant
        Assert.Equal(PredefinedOperation.None, Operation<int>.KindOf((a, b) => a == b ? 0 : Math.Max(a, b))); // not max when equal
        Assert.Equal(PredefinedOperation.None, Operation<int>.KindOf((a, b) => a > b ? a : Math.Abs(b)));
        Assert.Equal(PredefinedOperation.None, Operation<int>.KindOf((a, b) => { calls++; return a + b; }));  // a closure's field
        Assert.Equal(PredefinedOperation.None, Operation<double>.KindOf(Math.Pow));
        Assert.Equal(PredefinedOperation.None, Operation<Matrix2>.KindOf(Matrix2.Multiply));
        Assert.Equal(0, calls);
    }

    [Fact]
    public void IsCommutative_RecognizedLambdaOnPrimitive_IsCommutative()
    {
        Assert.True(Operation<long>.IsCommutative((a, b) => a + b));
        Assert.False(Operation<long>.IsCommutative((a, b) => a - b));
        Assert.False(Operation<string>.IsCommutative((a, b) => a + b));
    }
}
