using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Tests.Payloads;

/// <summary>
/// Where a link reassembles an incoming payload: a large array of a primitive type goes into an array of that type,
/// which the receive returns as it is; anything else into a pooled buffer, which the receive copies out of.
/// </summary>
public sealed class IncomingBufferTests
{
    private static readonly PayloadType Doubles = new(PayloadCode.Double, IsArray: true, TypeName: null);

    [Fact]
    public void For_LargePrimitiveArray_ReadsIntoTheArrayTheReceiveReturns()
    {
        var buffer = IncomingBuffer.For(Doubles, IncomingBuffer.DirectArrayMinimum);
        BitConverter.GetBytes(2.5).CopyTo(buffer.Bytes.Span[8..]);

        var received = Codec<double[]>.Instance.Decode(buffer.ToMessage(new Envelope(0, 1, 2), Doubles, null), PayloadSettings.Default);

        Assert.Null(buffer.Rented);
        Assert.Same(buffer.Elements, received);
        Assert.Equal(IncomingBuffer.DirectArrayMinimum / sizeof(double), received.Length);
        Assert.Equal(2.5, received[1]);
    }

    [Theory]
    [InlineData("Double", true, IncomingBuffer.DirectArrayMinimum - 8)] // small
    [InlineData("Double", false, IncomingBuffer.DirectArrayMinimum)]    // not an array
    [InlineData("Struct", true, IncomingBuffer.DirectArrayMinimum)]     // no type is made from a name off the wire
    [InlineData("Double", true, IncomingBuffer.DirectArrayMinimum + 4)] // not whole elements: the receive reports it
    public void For_AnythingElse_PooledBuffer(string codeName, bool isArray, int length)
    {
        var code = Enum.Parse<PayloadCode>(codeName);
        var buffer = IncomingBuffer.For(new PayloadType(code, isArray, code == PayloadCode.Struct ? "Some.Struct" : null), length);

        Assert.Null(buffer.Elements);
        Assert.NotNull(buffer.Rented);
        Assert.Equal(length, buffer.Bytes.Length);
        buffer.Return();
    }
}
