using System.Buffers;
using System.Buffers.Binary;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Internal;

public sealed class MessageFramingTests
{
    [Fact]
    public void Write_Message_PrefixIsZeroFlagAndBigEndianLength()
    {
        var message = new Hello { JobId = "job", SourceWorldRank = 5 };
        var output = new ArrayBufferWriter<byte>();

        MessageFraming.Write(output, message, RpcOptions.DefaultMaxMessageSize);

        var bytes = output.WrittenSpan;
        Assert.Equal(0, bytes[0]);
        Assert.Equal(message.CalculateSize(), BinaryPrimitives.ReadInt32BigEndian(bytes[1..]));
        Assert.Equal(message, Hello.Parser.ParseFrom(bytes[5..].ToArray()));
    }

    [Fact]
    public void TryReadMessage_TwoMessagesAcrossSegments_BothTakenInOrder()
    {
        var output = new ArrayBufferWriter<byte>();
        MessageFraming.Write(output, new Ack { Sequence = 1 }, 100);
        MessageFraming.Write(output, new Ack { Sequence = 2 }, 100);
        var buffer = SegmentedSequence.Of(output.WrittenMemory.ToArray(), 3);

        Assert.True(MessageFraming.TryReadMessage(ref buffer, 100, out var first));
        Assert.True(MessageFraming.TryReadMessage(ref buffer, 100, out var second));
        Assert.False(MessageFraming.TryReadMessage(ref buffer, 100, out _));

        Assert.Equal(1UL, Ack.Parser.ParseFrom(first).Sequence);
        Assert.Equal(2UL, Ack.Parser.ParseFrom(second).Sequence);
        Assert.True(buffer.IsEmpty);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    [InlineData(7)]
    public void TryReadMessage_Incomplete_FalseAndBufferUntouched(int available)
    {
        var framed = new byte[] { 0, 0, 0, 0, 3, 8, 1, 2 }.AsSpan(0, available).ToArray();
        var buffer = new ReadOnlySequence<byte>(framed);

        Assert.False(MessageFraming.TryReadMessage(ref buffer, 100, out _));
        Assert.Equal(available, buffer.Length);
    }

    [Fact]
    public void TryReadMessage_CompressedFlag_InternalError()
    {
        var buffer = new ReadOnlySequence<byte>([1, 0, 0, 0, 0]);

        var error = Assert.Throws<RpcException>(() => MessageFraming.TryReadMessage(ref buffer, 100, out _));

        Assert.Equal(StatusCode.Internal, error.StatusCode);
        Assert.Contains("compress", error.Status.Detail);
    }

    [Fact]
    public void TryReadMessage_LengthOverLimit_ResourceExhaustedBeforeBodyArrives()
    {
        var buffer = new ReadOnlySequence<byte>([0, 0, 0, 1, 0]); // announces 256 bytes, none here yet

        var error = Assert.Throws<RpcException>(() => MessageFraming.TryReadMessage(ref buffer, 255, out _));

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Equal("Received message of 256 bytes exceeds the limit of 255 (see RpcOptions.MaxMessageSize).", error.Status.Detail);
    }

    [Fact]
    public void Write_MessageOverLimit_ResourceExhaustedAndNothingWritten()
    {
        var output = new ArrayBufferWriter<byte>();

        var error = Assert.Throws<RpcException>(() => MessageFraming.Write(output, new Chunk { Payload = ByteString.CopyFrom(new byte[300]) }, 255));

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains("RpcOptions.MaxMessageSize", error.Status.Detail);
        Assert.Equal(0, output.WrittenCount);
    }
}
