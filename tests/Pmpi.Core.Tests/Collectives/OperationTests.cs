namespace Pmpi.Tests.Collectives;

public abstract class OperationTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArithmeticOpsOnInt_MatchSequentialFold(int size) =>
        AssertArithmetic(size, rank => rank * 7 - 9, (a, b) => a + b, (a, b) => a * b);

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArithmeticOpsOnLong_MatchSequentialFold(int size) =>
        AssertArithmetic(size, rank => (rank - 3) * 3_000_000_000L + 1, (a, b) => a + b, (a, b) => a * b);

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArithmeticOpsOnDouble_MatchSequentialFold(int size) =>
        AssertArithmetic(size, rank => (rank - 2.5) * 1.5, (a, b) => a + b, (a, b) => a * b);

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArithmeticOpsOnByte_MatchSequentialFoldWrapping(int size) =>
        AssertArithmetic(size, rank => (byte)(200 - rank * 23), (a, b) => unchecked((byte)(a + b)), (a, b) => unchecked((byte)(a * b)));

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_LogicalOpsOnBool_MatchSequentialFold(int size)
    {
        // Arrange: three patterns (all true, one false, alternating) so each op meets both outcomes.
        Func<int, bool>[] patterns = [_ => true, rank => rank != size - 1, rank => rank % 2 == 0];

        // Act
        var results = Run(size, world => patterns.Select(pattern => (
            And: world.Allreduce(pattern(world.Rank), Operation<bool>.LogicalAnd),
            Or: world.Allreduce(!pattern(world.Rank), Operation<bool>.LogicalOr),
            Xor: world.Allreduce(pattern(world.Rank), Operation<bool>.LogicalXor))).ToArray());

        // Assert
        var expected = patterns.Select(pattern => (
            Data.Fold(size, pattern, (a, b) => a && b),
            Data.Fold(size, r => !pattern(r), (a, b) => a || b),
            Data.Fold(size, pattern, (a, b) => a ^ b))).ToArray();
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_BitwiseOpsOnInt_MatchSequentialFold(int size)
    {
        // Arrange: a common high bit, a bit of each rank's own and a sign bit on odd ranks.
        static int ValueOf(int rank) => 0x100 | (1 << rank) | (rank % 2 == 1 ? int.MinValue : 0);

        // Act
        var results = Run(size, world => (
            world.Allreduce(ValueOf(world.Rank), Operation<int>.BitwiseAnd),
            world.Allreduce(ValueOf(world.Rank), Operation<int>.BitwiseOr),
            world.Allreduce(ValueOf(world.Rank), Operation<int>.ExclusiveOr)));

        // Assert
        var expected = (Data.Fold(size, ValueOf, (a, b) => a & b), Data.Fold(size, ValueOf, (a, b) => a | b), Data.Fold(size, ValueOf, (a, b) => a ^ b));
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Allreduce_BitwiseOpsOnUInt_MatchSequentialFold(int size)
    {
        // Arrange
        static uint ValueOf(int rank) => 0xF000_0000u | (3u << (2 * rank)) | (uint)rank;

        // Act
        var results = Run(size, world => (
            world.Allreduce(ValueOf(world.Rank), Operation<uint>.BitwiseAnd),
            world.Allreduce(ValueOf(world.Rank), Operation<uint>.BitwiseOr),
            world.Allreduce(ValueOf(world.Rank), Operation<uint>.ExclusiveOr)));

        // Assert
        var expected = (Data.Fold(size, ValueOf, (a, b) => a & b), Data.Fold(size, ValueOf, (a, b) => a | b), Data.Fold(size, ValueOf, (a, b) => a ^ b));
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    [Fact]
    public void PredefinedOps_PairsOfValues_GiveTheOperatorsResults()
    {
        // Act and Assert: the ops themselves, including narrow-integer wrapping and negative numbers.
        Assert.Equal(-7, Operation<int>.Min(-7, 3));
        Assert.Equal(3, Operation<int>.Max(-7, 3));
        Assert.Equal(-21, Operation<int>.Multiply(-7, 3));
        Assert.Equal((byte)4, Operation<byte>.Add(250, 10));
        Assert.Equal((byte)2, Operation<byte>.Min(200, 2));
        Assert.Equal((byte)200, Operation<byte>.Max(200, 2));
        Assert.Equal(long.MaxValue, Operation<long>.Max(long.MaxValue, long.MinValue));
        Assert.Equal(-0.5, Operation<double>.Min(-0.5, 0.25));
        Assert.Equal(new Vector2D(3, 8), Operation<Vector2D>.Multiply(new Vector2D(1, 2), new Vector2D(3, 4)));
        Assert.Equal("ab", Operation<string>.Add("a", "b"));
        Assert.Equal("a", Operation<string>.Min("b", "a"));
        Assert.False(Operation<bool>.LogicalXor(true, true));
        Assert.True(Operation<bool>.LogicalXor(false, true));
        Assert.Equal(0b0110u, Operation<uint>.ExclusiveOr(0b1100u, 0b1010u));
    }

    [Fact]
    public void PredefinedOps_OnNarrowAndFloatingPrimitives_WrapAndCompareAsTheOperators()
    {
        // Act and Assert: wrapping as C# wraps, and min and max by < and > (a NaN first loses, a NaN second wins).
        Assert.Equal((sbyte)-126, Operation<sbyte>.Add(127, 3));
        Assert.Equal((short)-32768, Operation<short>.Add(short.MaxValue, 1));
        Assert.Equal((ushort)65534, Operation<ushort>.Multiply(ushort.MaxValue, 2));
        Assert.Equal('c', Operation<char>.Add('a', (char)2));
        Assert.Equal((nint)(-4), Operation<nint>.Min(-4, 9));
        Assert.Equal(1f, Operation<float>.Min(float.NaN, 1f));
        Assert.True(float.IsNaN(Operation<float>.Min(1f, float.NaN)));
        Assert.Equal(2.0, Operation<double>.Max(double.NaN, 2.0));
        Assert.True(Operation<bool>.BitwiseOr(false, true));
    }

    [Fact]
    public void PredefinedOps_OnPrimitives_AreCompiledCodeNotExpressionTrees()
    {
        // Act and Assert: an expression tree compiles to a method no type declares, and costs a rank's first
        // reduction tens of milliseconds (interpreted under Native AOT).
        Assert.NotNull(Operation<double>.Add.Method.DeclaringType);
        Assert.NotNull(Operation<float>.Max.Method.DeclaringType);
        Assert.NotNull(Operation<int>.Min.Method.DeclaringType);
        Assert.NotNull(Operation<long>.Multiply.Method.DeclaringType);
        Assert.NotNull(Operation<byte>.ExclusiveOr.Method.DeclaringType);
        Assert.NotNull(Operation<bool>.LogicalAnd.Method.DeclaringType);
        Assert.NotNull(Operation<ulong>.BitwiseAnd.Method.DeclaringType);
    }

    [Fact]
    public void Multiply_OnString_ThrowsInvalidArgumentNamingTheType() =>
        AssertNotDefined(() => Operation<string>.Multiply, "Multiply", "System.String");

    [Fact]
    public void BitwiseAnd_OnDouble_ThrowsInvalidArgumentNamingTheType() =>
        AssertNotDefined(() => Operation<double>.BitwiseAnd, "BitwiseAnd", "System.Double");

    [Fact]
    public void LogicalXor_OnInt_ThrowsInvalidArgumentNamingTheType() =>
        AssertNotDefined(() => Operation<int>.LogicalXor, "LogicalXor", "System.Int32");

    [Fact]
    public void LogicalAnd_OnInt_ThrowsInvalidArgumentNamingTheType() =>
        AssertNotDefined(() => Operation<int>.LogicalAnd, "LogicalAnd", "System.Int32");

    [Fact]
    public void Min_OnStructWithoutComparison_ThrowsInvalidArgumentNamingTheType() =>
        AssertNotDefined(() => Operation<Vector2D>.Min, "Min", typeof(Vector2D).FullName!);

    private void AssertArithmetic<T>(int size, Func<int, T> valueOf, Func<T, T, T> add, Func<T, T, T> multiply)
        where T : IComparable<T>
    {
        // Act
        var results = Run(size, world => (
            Add: world.Allreduce(valueOf(world.Rank), Operation<T>.Add),
            Multiply: world.Allreduce(valueOf(world.Rank), Operation<T>.Multiply),
            Min: world.Allreduce(valueOf(world.Rank), Operation<T>.Min),
            Max: world.Allreduce(valueOf(world.Rank), Operation<T>.Max)));

        // Assert
        var values = Enumerable.Range(0, size).Select(valueOf).ToArray();
        var expected = (values.Aggregate(add), values.Aggregate(multiply), values.Min()!, values.Max()!);
        Assert.All(results, result => Assert.Equal(expected, result));
    }

    private static void AssertNotDefined<T>(Func<ReductionOperation<T>> get, string operation, string typeName)
    {
        // Act: asked twice, so a cached failure reports the same way.
        var first = Assert.Throws<MpiException>(() => get());
        var second = Assert.Throws<MpiException>(() => get());

        // Assert
        foreach (var error in new[] { first, second })
        {
            Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
            Assert.Contains(operation, error.Message);
            Assert.Contains(typeName, error.Message);
        }
    }
}
