using System.Buffers;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Devices.Grpc;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Core.Tests.Devices.Grpc;

/// <summary>The hand-written Data/Chunk encoding against the generated protobuf code, both ways.</summary>
public sealed class FrameCodecTests
{
    public static TheoryData<int, int, int, ulong, bool, int, bool, string?, int> Headers => new()
    {
        { 0, 0, 0, 1, false, (int)PayloadCode.Byte, true, null, 0 },
        { 4, 1, 7, 42, true, (int)PayloadCode.Double, true, null, 1 },
        { 2, 1, -1, ulong.MaxValue, false, (int)PayloadCode.Struct, false, "Ns.Point, Assembly with ünïcode", 300 },
        { int.MaxValue, int.MinValue, 32767, 128, true, (int)PayloadCode.Serialized, false, "T", 70000 },
    };

    [Theory]
    [MemberData(nameof(Headers))]
    public void WriteDataHead_FollowedByPayload_ParsesAsTheSameDataFrame(int context, int source, int tag, ulong sequence, bool synchronous,
        int code, bool isArray, string? typeName, int payloadLength)
    {
        var type = new PayloadType((PayloadCode)code, isArray, typeName);
        var payload = Payload(payloadLength);
        var head = new byte[FrameCodec.MaxDataHeadSize(type)];

        int written = FrameCodec.WriteDataHead(head, new Envelope(context, source, tag), type, sequence, synchronous, payloadLength + 5L, payloadLength);
        var frame = Frame.Parser.ParseFrom([.. head.AsSpan(0, written), .. payload]);

        Assert.Equal(Frame.BodyOneofCase.Data, frame.BodyCase);
        Assert.Equal((context, source, tag, sequence, synchronous), (frame.Data.Context, frame.Data.Source, frame.Data.Tag, frame.Data.Sequence, frame.Data.Synchronous));
        Assert.Equal((code, isArray, typeName ?? "", payloadLength + 5L), (frame.Data.TypeCode, frame.Data.IsArray, frame.Data.TypeName, frame.Data.TotalLength));
        Assert.Equal(payload, frame.Data.Payload.ToByteArray());
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(127)]
    [InlineData(128)]
    [InlineData(1 << 20)]
    public void WriteChunkHead_FollowedByPayload_ParsesAsTheSameChunk(int payloadLength)
    {
        var payload = Payload(payloadLength);
        var head = new byte[FrameCodec.MaxChunkHeadSize];

        int written = FrameCodec.WriteChunkHead(head, payloadLength);
        var frame = Frame.Parser.ParseFrom([.. head.AsSpan(0, written), .. payload]);

        Assert.Equal(Frame.BodyOneofCase.Chunk, frame.BodyCase);
        Assert.Equal(payload, frame.Chunk.Payload.ToByteArray());
    }

    [Theory]
    [MemberData(nameof(Headers))]
    public void Read_DataFrameFromProtobuf_GivesItsFieldsAndPayload(int context, int source, int tag, ulong sequence, bool synchronous,
        int code, bool isArray, string? typeName, int payloadLength)
    {
        var payload = Payload(payloadLength);
        var data = new Data
        {
            Context = context, Source = source, Tag = tag, Sequence = sequence, Synchronous = synchronous, TypeCode = code,
            IsArray = isArray, TypeName = typeName ?? "", TotalLength = payloadLength, Payload = ByteString.CopyFrom(payload),
        };

        var kind = FrameCodec.Read(SegmentedSequence.Of(new Frame { Data = data }.ToByteArray(), 7), out var header, out var read, out var other);

        Assert.Equal(Frame.BodyOneofCase.Data, kind);
        Assert.Null(other);
        Assert.Equal(DataHeader.Of(data), header);
        Assert.Equal(payload, read.ToArray());
    }

    [Fact]
    public void Read_ChunkFrameFromProtobuf_GivesItsPayload()
    {
        var payload = Payload(100_000);

        var kind = FrameCodec.Read(SegmentedSequence.Of(new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(payload) } }.ToByteArray(), 7), out _, out var read, out _);

        Assert.Equal(Frame.BodyOneofCase.Chunk, kind);
        Assert.Equal(payload, read.ToArray());
    }

    [Fact]
    public void Read_DataWithAnUnknownFieldAndFieldsOutOfOrder_StillRead()
    {
        // Field 15 (varint 9) is unknown to this version; the payload comes before the tag.
        byte[] data = [0x52, 0x02, 0xAB, 0xCD, 0x78, 0x09, 0x18, 0x05, 0x48, 0x02];
        byte[] frame = [0x12, (byte)data.Length, .. data];

        var kind = FrameCodec.Read(new ReadOnlySequence<byte>(frame), out var header, out var payload, out _);

        Assert.Equal(Frame.BodyOneofCase.Data, kind);
        Assert.Equal((5, 2L), (header.Tag, header.TotalLength));
        Assert.Equal([0xAB, 0xCD], payload.ToArray());
    }

    [Fact]
    public void Read_DataWithTwoPayloadFields_FallsBackToProtobufWhichKeepsTheLast()
    {
        byte[] data = [0x52, 0x01, 0x01, 0x52, 0x01, 0x02];
        byte[] frame = [0x12, (byte)data.Length, .. data];

        FrameCodec.Read(new ReadOnlySequence<byte>(frame), out _, out var payload, out var other);

        Assert.NotNull(other);
        Assert.Equal([0x02], payload.ToArray());
    }

    [Fact]
    public void Read_OtherFrames_ParsedByProtobuf()
    {
        var ack = new Frame { Ack = new Ack { Sequence = 9 } };

        var kind = FrameCodec.Read(new ReadOnlySequence<byte>(ack.ToByteArray()), out _, out _, out var other);

        Assert.Equal(Frame.BodyOneofCase.Ack, kind);
        Assert.Equal(ack, other);
    }

    [Fact]
    public void Read_Garbage_ThrowsInvalidArgument()
    {
        var error = Assert.Throws<RpcException>(() => FrameCodec.Read(new ReadOnlySequence<byte>([0x12, 0x05, 0x08]), out _, out _, out _));

        Assert.Equal(StatusCode.InvalidArgument, error.StatusCode);
    }

    private static byte[] Payload(int length)
    {
        var payload = new byte[length];
        new Random(length).NextBytes(payload);
        return payload;
    }
}
