using System.Runtime.InteropServices;
using Pmpi.Collectives;

namespace Pmpi.Tests.Collectives;

/// <summary>
/// Element-wise combination: a predefined operation on a primitive type, run over SIMD registers, gives every
/// element exactly what the operation itself gives (NaN, signed zeros, infinities, wrap-around and the tail past the
/// last whole register included), into a new array or in place; any other operation is called per element.
/// </summary>
public sealed class ElementwiseTests
{
    // Not multiples of any register width, so every run has a tail.
    private static readonly int[] Lengths = [0, 1, 7, 33, 1_001];

    [Fact]
    public void Of_PredefinedOperationsOnDoubles_EqualTheOperationPerElement()
    {
        double[] special = [double.NaN, 0.0, -0.0, double.PositiveInfinity, double.NegativeInfinity, double.Epsilon, -1.5, 1e308];
        AssertPerElement(Operation<double>.Add, (random, i) => i % 5 == 0 ? special[random.Next(special.Length)] : random.NextDouble() * 200 - 100);
        AssertPerElement(Operation<double>.Multiply, (random, i) => i % 5 == 0 ? special[random.Next(special.Length)] : random.NextDouble() * 4 - 2);
        AssertPerElement(Operation<double>.Min, (random, i) => i % 3 == 0 ? special[random.Next(special.Length)] : random.Next(-3, 3));
        AssertPerElement(Operation<double>.Max, (random, i) => i % 3 == 0 ? special[random.Next(special.Length)] : random.Next(-3, 3));
    }

    [Fact]
    public void Of_PredefinedOperationsOnFloats_EqualTheOperationPerElement()
    {
        AssertPerElement(Operation<float>.Add, (random, i) => i % 7 == 0 ? float.NaN : (float)(random.NextDouble() * 10));
        AssertPerElement(Operation<float>.Min, (random, i) => i % 7 == 0 ? -0.0f : (float)random.Next(-2, 2));
    }

    [Fact]
    public void Of_PredefinedOperationsOnIntegers_EqualTheOperationPerElementWrappingAsItDoes()
    {
        foreach (var op in new[] { Operation<int>.Add, Operation<int>.Multiply, Operation<int>.Min, Operation<int>.Max, Operation<int>.BitwiseAnd, Operation<int>.BitwiseOr, Operation<int>.ExclusiveOr })
            AssertPerElement(op, (random, _) => random.Next(int.MinValue, int.MaxValue));
        AssertPerElement(Operation<long>.Multiply, (random, _) => random.NextInt64());
        AssertPerElement(Operation<ulong>.Max, (random, _) => (ulong)random.NextInt64() * 3);
        AssertPerElement(Operation<byte>.Add, (random, _) => (byte)random.Next(256));
        AssertPerElement(Operation<sbyte>.Min, (random, _) => (sbyte)random.Next(-128, 128));
        AssertPerElement(Operation<short>.Multiply, (random, _) => (short)random.Next(short.MinValue, short.MaxValue));
        AssertPerElement(Operation<ushort>.Max, (random, _) => (ushort)random.Next(ushort.MaxValue));
        AssertPerElement(Operation<uint>.ExclusiveOr, (random, _) => (uint)random.NextInt64(uint.MaxValue));
    }

    [Fact]
    public void Of_UsersOperation_CalledOncePerElementInOrder()
    {
        int calls = 0;
        var combine = Elementwise.Of<int>((first, second) =>
        {
            calls++;
            return first * 10 + second;
        });

        var result = combine([1, 2, 3], [4, 5, 6]);

        Assert.Equal([14, 25, 36], result);
        Assert.Equal(3, calls);
    }

    [Fact]
    public void Combine_IntoTheFirstInput_SameAsIntoANewArray()
    {
        var random = new Random(7);
        var first = Enumerable.Range(0, 1_001).Select(_ => random.NextDouble()).ToArray();
        var second = Enumerable.Range(0, 1_001).Select(_ => random.NextDouble()).ToArray();
        var expected = Elementwise.Of(Operation<double>.Add)(first, second);

        Elementwise.Combine<double>(first, second, first, Operation<double>.Add, PredefinedOperation.Add);

        Assert.Equal(expected, first);
    }

    [Fact]
    public void Combine_SpansOfDifferentLengths_RefusedBeforeAnyElementIsTouched()
    {
        // The vector loop reads and writes unchecked: a span shorter than the others must never reach it.
        double[] first = [1, 2, 3, 4, 5, 6, 7, 8, 9], shorter = [1, 2, 3, 4, 5, 6, 7, 8], into = new double[9];

        Assert.Throws<ArgumentException>(() => Elementwise.Combine<double>(first, shorter, into, Operation<double>.Add, PredefinedOperation.Add));
        Assert.Throws<ArgumentException>(() => Elementwise.Combine<double>(first, first, into.AsSpan(0, 8), Operation<double>.Add, PredefinedOperation.Add));
        Assert.All(into, value => Assert.Equal(0, value));
    }

    [Fact]
    public void Of_ArraysOfDifferentLengths_RefusedNamingBoth()
    {
        var error = Assert.Throws<MpiException>(() => Elementwise.Of(Operation<int>.Add)([1, 2], [1, 2, 3]));

        Assert.Equal(ErrorClass.InvalidCount, error.ErrorClass);
        Assert.Contains("(2 and 3)", error.Message);
    }

    /// <summary>For each length, random inputs combined by <paramref name="op"/> as arrays and one element at a time agree bit for bit.</summary>
    private static void AssertPerElement<T>(ReductionOperation<T> op, Func<Random, int, T> element)
        where T : unmanaged
    {
        Assert.NotEqual(PredefinedOperation.None, Operation<T>.KindOf(op));
        var random = new Random(42);
        foreach (int length in Lengths)
        {
            var first = Enumerable.Range(0, length).Select(i => element(random, i)).ToArray();
            var second = Enumerable.Range(0, length).Select(i => element(random, i + 1)).ToArray();

            var result = Elementwise.Of(op)(first, second);

            var expected = first.Zip(second, (a, b) => op(a, b)).ToArray();
            Assert.True(MemoryMarshal.AsBytes(expected.AsSpan()).SequenceEqual(MemoryMarshal.AsBytes(result.AsSpan())),
                $"{typeof(T).Name} {op.Method.Name} of {length} elements differs from the operation per element (compared bit for bit: NaN is NaN, -0 is not 0).");
        }
    }
}
