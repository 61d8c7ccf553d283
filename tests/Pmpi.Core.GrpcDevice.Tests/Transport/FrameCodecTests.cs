using System.Buffers;
using Google.Protobuf;
using Pmpi.Devices.Grpc;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Transport;

/// <summary>
/// Reading a frame from its head alone (<see cref="FrameCodec.ReadHead"/>), as the endpoint does for a large one,
/// agrees with reading it whole, for frames FrameCodec writes and frames protobuf's own serializer writes.
/// </summary>
public sealed class FrameCodecTests
{
    [Theory]
    [InlineData(2000, null)]
    [InlineData(1 << 20, "Sample.Point, Sample")]
    public void ReadHead_OfAWrittenDataFrame_FindsItsFieldsAndWhereItsPayloadStarts(int payloadSize, string? typeName)
    {
        var payload = Enumerable.Range(0, payloadSize).Select(i => (byte)i).ToArray();
        var type = new PayloadType(PayloadCode.Struct, IsArray: true, typeName);
        var head = new byte[FrameCodec.MaxDataHeadSize(type)];
        int headLength = FrameCodec.WriteDataHead(head, new Envelope(4, 2, 77), type, sequence: 9, synchronous: true, totalLength: 3 * payloadSize, payloadSize);
        var frame = head[..headLength].Concat(payload).ToArray();

        var kind = FrameCodec.ReadHead(frame.AsMemory(0, 1024), frame.Length, out var header, out int payloadStart);

        Assert.Equal(Frame.BodyOneofCase.Data, kind);
        Assert.Equal(headLength, payloadStart);
        Assert.Equal(new DataHeader(4, 2, 77, 9, true, (int)PayloadCode.Struct, true, typeName ?? "", 3L * payloadSize), header);
        AssertAgreesWithWholeRead(frame);
    }

    [Fact]
    public void ReadHead_OfAWrittenChunk_FindsWhereItsPayloadStarts()
    {
        var head = new byte[FrameCodec.MaxChunkHeadSize];
        int headLength = FrameCodec.WriteChunkHead(head, 5000);
        var frame = head[..headLength].Concat(new byte[5000]).ToArray();

        Assert.Equal(Frame.BodyOneofCase.Chunk, FrameCodec.ReadHead(frame.AsMemory(0, 1024), frame.Length, out _, out int payloadStart));
        Assert.Equal(headLength, payloadStart);
        AssertAgreesWithWholeRead(frame);
    }

    [Fact]
    public void ReadHead_OfFramesProtobufSerialized_AgreesWithTheWholeRead()
    {
        AssertAgreesWithWholeRead(new Frame { Data = new Data { Context = 1, Tag = 3, TotalLength = 4000, TypeName = "T", Payload = ByteString.CopyFrom(new byte[4000]) } }.ToByteArray());
        AssertAgreesWithWholeRead(new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[3000]) } }.ToByteArray());
        AssertAgreesWithWholeRead(new Frame { Hello = new Hello { JobId = new string('j', 2000) } }.ToByteArray());
    }

    [Fact]
    public void ReadHead_PayloadFollowedByAnotherField_IsLeftToTheWholeRead()
    {
        // An unknown field 20 (varint) after the payload: legal protobuf, but not the shape ReadHead takes.
        var chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[2000]) }.ToByteArray().Concat(new byte[] { 0xA0, 0x01, 1 }).ToArray();
        var frame = new byte[] { (Frame.ChunkFieldNumber << 3) | 2 }.Concat(Varint(chunk.Length)).Concat(chunk).ToArray();

        Assert.Equal(Frame.BodyOneofCase.None, FrameCodec.ReadHead(frame.AsMemory(0, 1024), frame.Length, out _, out _));
        Assert.Equal(Frame.BodyOneofCase.Chunk, FrameCodec.Read(new ReadOnlySequence<byte>(frame), out _, out var payload, out _));
        Assert.Equal(2000, payload.Length);
    }

    private static void AssertAgreesWithWholeRead(byte[] frame)
    {
        var kind = FrameCodec.ReadHead(frame.AsMemory(0, Math.Min(1024, frame.Length)), frame.Length, out var header, out int payloadStart);
        var wholeKind = FrameCodec.Read(new ReadOnlySequence<byte>(frame), out var wholeHeader, out var payload, out _);
        if (kind == Frame.BodyOneofCase.None) return; // left to the whole read, which is always right
        Assert.Equal((wholeKind, wholeHeader), (kind, header));
        Assert.Equal(payload.ToArray(), frame[payloadStart..]);
    }

    private static byte[] Varint(int value)
    {
        var bytes = new List<byte>();
        for (; value >= 0x80; value >>= 7) bytes.Add((byte)(value | 0x80));
        bytes.Add((byte)value);
        return [.. bytes];
    }
}
