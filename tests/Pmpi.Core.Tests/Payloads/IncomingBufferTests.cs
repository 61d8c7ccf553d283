using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Tests.Payloads;

/// <summary>
/// Where a link reassembles an incoming payload: a large array of a primitive type, for a posted receive that returns
/// a new array, goes into an array of that type, which the receive returns as it is; anything else into a pooled
/// buffer, which the receive copies out of.
/// </summary>
public sealed class IncomingBufferTests
{
    private static readonly PayloadType Doubles = new(PayloadCode.Double, IsArray: true, TypeName: null);
    private static readonly Envelope Envelope = new(0, 1, 2);

    [Fact]
    public void For_LargePrimitiveArrayForAReceiveThatReturnsANewArray_ReadsIntoTheArrayTheReceiveReturns()
    {
        var engine = new MatchingEngine();
        var receive = engine.Post(Envelope, returnsNewArray: true);
        var buffer = IncomingBuffer.For(Doubles, IncomingBuffer.DirectArrayMinimum, engine, Envelope);
        BitConverter.GetBytes(2.5).CopyTo(buffer.Bytes.Span[8..]);

        engine.Deliver(buffer.ToMessage(Envelope, Doubles, null));
        var received = Codec<double[]>.Instance.Decode(receive.Message!, PayloadSettings.Default);

        Assert.Null(buffer.Rented);
        Assert.Same(buffer.Elements, received);
        Assert.Equal(IncomingBuffer.DirectArrayMinimum / sizeof(double), received.Length);
        Assert.Equal(2.5, received[1]);
    }

    [Fact]
    public void For_LargePrimitiveArrayForAReceiveIntoTheCallersArray_PooledBuffer()
    {
        var engine = new MatchingEngine();
        engine.Post(Envelope, returnsNewArray: false);

        var buffer = IncomingBuffer.For(Doubles, IncomingBuffer.DirectArrayMinimum, engine, Envelope);

        Assert.Null(buffer.Elements);
        Assert.NotNull(buffer.Rented);
        buffer.Return();
    }

    [Theory]
    [InlineData("Double", true, IncomingBuffer.DirectArrayMinimum - 8)] // small
    [InlineData("Double", false, IncomingBuffer.DirectArrayMinimum)]    // not an array
    [InlineData("Struct", true, IncomingBuffer.DirectArrayMinimum)]     // no type is made from a name off the wire
    [InlineData("Double", true, IncomingBuffer.DirectArrayMinimum + 4)] // not whole elements: the receive reports it
    public void For_AnythingElse_PooledBuffer(string codeName, bool isArray, int length)
    {
        var code = Enum.Parse<PayloadCode>(codeName);
        var engine = new MatchingEngine();
        engine.Post(Envelope, returnsNewArray: true);

        var buffer = IncomingBuffer.For(new PayloadType(code, isArray, code == PayloadCode.Struct ? "Some.Struct" : null), length, engine, Envelope);

        Assert.Null(buffer.Elements);
        Assert.NotNull(buffer.Rented);
        Assert.Equal(length, buffer.Bytes.Length);
        buffer.Return();
    }

    [Fact]
    public void For_NoReceivePostedYet_PooledBuffer()
    {
        var buffer = IncomingBuffer.For(Doubles, IncomingBuffer.DirectArrayMinimum, new MatchingEngine(), Envelope);

        Assert.Null(buffer.Elements);
        buffer.Return();
    }
}
