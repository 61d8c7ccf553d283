using System.Buffers;
using System.Text;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;
// Pmpi.Status is an MPI status; this is a call's.
using RpcStatus = Grpc.Core.Status;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The hot-path encoding of transport.proto's Data and Chunk frames, written and read by hand so that a payload is
/// never copied into or out of a ByteString: the sender writes the frame's head (everything up to the payload bytes,
/// which protobuf lets come last) and then the caller's bytes as they are; the receiver finds the payload as a slice
/// of the pipe's buffers and copies it once, into the message's pooled buffer. Anything not shaped as this class
/// writes it (other frames, fields in another order, repeated fields) goes through the generated parser instead, so
/// the wire stays plain protobuf either way.
/// </summary>
internal static class FrameCodec
{
    private const int WireVarint = 0, WireFixed64 = 1, WireLengthDelimited = 2, WireFixed32 = 5;
    private const byte FrameDataTag = (Frame.DataFieldNumber << 3) | WireLengthDelimited;
    private const byte FrameChunkTag = (Frame.ChunkFieldNumber << 3) | WireLengthDelimited;
    private const int MaxVarintSize = 10;

    /// <summary>The most bytes <see cref="WriteDataHead"/> writes for a message of <paramref name="type"/>.</summary>
    public static int MaxDataHeadSize(PayloadType type) =>
        2 * (1 + MaxVarintSize) + 9 * (1 + MaxVarintSize) + Encoding.UTF8.GetMaxByteCount(type.TypeName?.Length ?? 0);

    /// <summary>The most bytes <see cref="WriteChunkHead"/> writes.</summary>
    public const int MaxChunkHeadSize = 3 * (1 + MaxVarintSize);

    /// <summary>
    /// Writes a Frame holding a Data frame up to its payload's bytes, which must follow:
    /// <paramref name="payloadLength"/> of them, the first part of a message of <paramref name="totalLength"/> bytes.
    /// </summary>
    /// <returns>The bytes written.</returns>
    public static int WriteDataHead(Span<byte> destination, Envelope envelope, PayloadType type, ulong sequence, bool synchronous,
        long totalLength, int payloadLength)
    {
        // Field sizes first: protobuf prefixes the nested Data message with its length.
        int typeNameBytes = type.TypeName is null ? 0 : Encoding.UTF8.GetByteCount(type.TypeName);
        long dataLength = Int32FieldSize(envelope.Context) + Int32FieldSize(envelope.Source) + Int32FieldSize(envelope.Tag)
            + UInt64FieldSize(sequence) + (synchronous ? 2 : 0) + Int32FieldSize((int)type.Code) + (type.IsArray ? 2 : 0)
            + (typeNameBytes == 0 ? 0 : 1 + VarintSize((uint)typeNameBytes) + typeNameBytes)
            + UInt64FieldSize((ulong)totalLength)
            + (payloadLength == 0 ? 0 : 1 + VarintSize((uint)payloadLength) + payloadLength);
        int at = 0;
        destination[at++] = FrameDataTag;
        at += WriteVarint(destination[at..], (ulong)dataLength);
        at += WriteInt32Field(destination[at..], Data.ContextFieldNumber, envelope.Context);
        at += WriteInt32Field(destination[at..], Data.SourceFieldNumber, envelope.Source);
        at += WriteInt32Field(destination[at..], Data.TagFieldNumber, envelope.Tag);
        at += WriteUInt64Field(destination[at..], Data.SequenceFieldNumber, sequence);
        at += WriteUInt64Field(destination[at..], Data.SynchronousFieldNumber, synchronous ? 1UL : 0);
        at += WriteInt32Field(destination[at..], Data.TypeCodeFieldNumber, (int)type.Code);
        at += WriteUInt64Field(destination[at..], Data.IsArrayFieldNumber, type.IsArray ? 1UL : 0);
        if (typeNameBytes > 0)
        {
            destination[at++] = (Data.TypeNameFieldNumber << 3) | WireLengthDelimited;
            at += WriteVarint(destination[at..], (uint)typeNameBytes);
            at += Encoding.UTF8.GetBytes(type.TypeName, destination[at..]);
        }
        at += WriteUInt64Field(destination[at..], Data.TotalLengthFieldNumber, (ulong)totalLength);
        if (payloadLength > 0)
        {
            destination[at++] = (Data.PayloadFieldNumber << 3) | WireLengthDelimited;
            at += WriteVarint(destination[at..], (uint)payloadLength);
        }
        return at;
    }

    /// <summary>Writes a Frame holding a Chunk frame up to its payload's <paramref name="payloadLength"/> bytes, which must follow.</summary>
    /// <returns>The bytes written.</returns>
    public static int WriteChunkHead(Span<byte> destination, int payloadLength)
    {
        int at = 0;
        destination[at++] = FrameChunkTag;
        at += WriteVarint(destination[at..], payloadLength == 0 ? 0 : (ulong)(1 + VarintSize((uint)payloadLength) + payloadLength));
        if (payloadLength > 0)
        {
            destination[at++] = (Chunk.PayloadFieldNumber << 3) | WireLengthDelimited;
            at += WriteVarint(destination[at..], (uint)payloadLength);
        }
        return at;
    }

    /// <summary>
    /// Reads one Frame. For Data and Chunk frames, <paramref name="payload"/> is a slice of <paramref name="frame"/>
    /// (valid as long as it is) and <paramref name="data"/> the Data frame's fields other than its payload; any other
    /// frame comes back parsed in <paramref name="other"/>.
    /// </summary>
    /// <exception cref="RpcException">INVALID_ARGUMENT: the bytes are not a Frame.</exception>
    public static Frame.BodyOneofCase Read(ReadOnlySequence<byte> frame, out DataHeader data, out ReadOnlySequence<byte> payload, out Frame? other)
    {
        payload = default;
        other = null;
        var kind = TryReadShaped(frame, frame.Length, out data, out long payloadStart, out long payloadLength);
        if (kind != Frame.BodyOneofCase.None)
        {
            payload = frame.Slice(payloadStart, payloadLength);
            return kind;
        }
        try
        {
            other = Frame.Parser.ParseFrom(frame);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Malformed transport frame: {e.Message}", e));
        }
        data = other.BodyCase == Frame.BodyOneofCase.Data ? DataHeader.Of(other.Data) : default;
        payload = other.BodyCase switch
        {
            Frame.BodyOneofCase.Data => new ReadOnlySequence<byte>(other.Data.Payload.Memory),
            Frame.BodyOneofCase.Chunk => new ReadOnlySequence<byte>(other.Chunk.Payload.Memory),
            _ => default,
        };
        return other.BodyCase;
    }

    /// <summary>
    /// Reads a Data or Chunk frame of <paramref name="length"/> bytes from its first bytes, <paramref name="head"/>,
    /// as this class writes them: the payload last, starting within <paramref name="head"/> at
    /// <paramref name="payloadStart"/> and running to the frame's end. None when the frame is shaped otherwise (any
    /// other frame, another field order, a head longer than <paramref name="head"/>): read it whole instead.
    /// </summary>
    public static Frame.BodyOneofCase ReadHead(ReadOnlyMemory<byte> head, long length, out DataHeader data, out int payloadStart)
    {
        var kind = TryReadShaped(new ReadOnlySequence<byte>(head), length, out data, out long start, out long payloadLength);
        payloadStart = (int)start;
        return kind != Frame.BodyOneofCase.None && start + payloadLength == length && start <= head.Length ? kind : Frame.BodyOneofCase.None;
    }

    /// <summary>
    /// A Data or Chunk frame of <paramref name="length"/> bytes, of which <paramref name="frame"/> holds the first (or
    /// all): its fields, and where its payload lies. None when it is another frame or shaped otherwise.
    /// </summary>
    private static Frame.BodyOneofCase TryReadShaped(ReadOnlySequence<byte> frame, long length, out DataHeader data, out long payloadStart, out long payloadLength)
    {
        data = default;
        payloadStart = payloadLength = 0;
        var reader = new SequenceReader<byte>(frame);
        if (!reader.TryRead(out byte tag) || tag is not (FrameDataTag or FrameChunkTag)
            || !TryReadVarint(ref reader, out ulong bodyLength) || (ulong)reader.Consumed + bodyLength != (ulong)length)
            return Frame.BodyOneofCase.None;
        return tag == FrameDataTag
            ? TryReadData(ref reader, length, out data, out payloadStart, out payloadLength) ? Frame.BodyOneofCase.Data : Frame.BodyOneofCase.None
            : TryReadChunk(ref reader, length, out payloadStart, out payloadLength) ? Frame.BodyOneofCase.Chunk : Frame.BodyOneofCase.None;
    }

    /// <summary>
    /// Reads the fields of a Data message that ends at <paramref name="end"/> (counted from the reader's start); a
    /// payload that runs to the end need not be in the reader. False when it is shaped otherwise.
    /// </summary>
    private static bool TryReadData(ref SequenceReader<byte> reader, long end, out DataHeader data, out long payloadStart, out long payloadLength)
    {
        data = default;
        payloadStart = payloadLength = 0;
        int context = 0, source = 0, tag = 0, typeCode = 0;
        ulong sequence = 0;
        long totalLength = 0;
        bool synchronous = false, isArray = false, payloadSeen = false;
        string typeName = "";
        while (reader.Consumed < end && !(payloadSeen && payloadStart + payloadLength == end))
        {
            if (!TryReadVarint(ref reader, out ulong key) || key > uint.MaxValue) return false;
            int field = (int)(key >> 3), wire = (int)(key & 7);
            if (field is >= Data.ContextFieldNumber and <= Data.TotalLengthFieldNumber and not Data.TypeNameFieldNumber)
            {
                if (wire != WireVarint || !TryReadVarint(ref reader, out ulong value)) return false;
                switch (field)
                {
                    case Data.ContextFieldNumber: context = (int)value; break;
                    case Data.SourceFieldNumber: source = (int)value; break;
                    case Data.TagFieldNumber: tag = (int)value; break;
                    case Data.SequenceFieldNumber: sequence = value; break;
                    case Data.SynchronousFieldNumber: synchronous = value != 0; break;
                    case Data.TypeCodeFieldNumber: typeCode = (int)value; break;
                    case Data.IsArrayFieldNumber: isArray = value != 0; break;
                    default: totalLength = (long)value; break;
                }
            }
            else if (field == Data.PayloadFieldNumber)
            {
                // A repeated bytes field would have to be merged (last one wins): leave that to the generated parser.
                if (payloadSeen || !TryReadPayload(ref reader, wire, end, out payloadStart, out payloadLength)) return false;
                payloadSeen = true;
            }
            else if (field == Data.TypeNameFieldNumber)
            {
                if (wire != WireLengthDelimited || !TryReadVarint(ref reader, out ulong size) || size > (ulong)reader.Remaining) return false;
                typeName = Encoding.UTF8.GetString(reader.UnreadSequence.Slice(0, (long)size));
                reader.Advance((long)size);
            }
            else if (!TrySkip(ref reader, wire)) return false;
        }
        data = new DataHeader(context, source, tag, sequence, synchronous, typeCode, isArray, typeName, totalLength);
        return true;
    }

    private static bool TryReadChunk(ref SequenceReader<byte> reader, long end, out long payloadStart, out long payloadLength)
    {
        payloadStart = payloadLength = 0;
        bool payloadSeen = false;
        while (reader.Consumed < end && !(payloadSeen && payloadStart + payloadLength == end))
        {
            if (!TryReadVarint(ref reader, out ulong key) || key > uint.MaxValue) return false;
            int field = (int)(key >> 3), wire = (int)(key & 7);
            if (field == Chunk.PayloadFieldNumber)
            {
                if (payloadSeen || !TryReadPayload(ref reader, wire, end, out payloadStart, out payloadLength)) return false;
                payloadSeen = true;
            }
            else if (!TrySkip(ref reader, wire)) return false;
        }
        return true;
    }

    /// <summary>A payload field's place: passed over when it runs to <paramref name="end"/> (it may lie beyond the reader), else skipped.</summary>
    private static bool TryReadPayload(ref SequenceReader<byte> reader, int wire, long end, out long start, out long length)
    {
        start = length = 0;
        if (wire != WireLengthDelimited || !TryReadVarint(ref reader, out ulong size)) return false;
        start = reader.Consumed;
        length = (long)size;
        // The last field: nothing after it to read, and it may lie beyond the reader, which stops here.
        if ((ulong)start + size == (ulong)end) return true;
        return size <= (ulong)reader.Remaining && reader.TryAdvance(length);
    }

    /// <summary>Skips an unknown field's value (proto3: a newer sender may add fields).</summary>
    private static bool TrySkip(ref SequenceReader<byte> reader, int wire)
    {
        switch (wire)
        {
            case WireVarint:
                return TryReadVarint(ref reader, out _);
            case WireFixed64:
                return reader.TryAdvance(8);
            case WireFixed32:
                return reader.TryAdvance(4);
            case WireLengthDelimited:
                return TryReadVarint(ref reader, out ulong size) && size <= (ulong)reader.Remaining && reader.TryAdvance((long)size);
            default:
                return false;
        }
    }

    private static bool TryAdvance(this ref SequenceReader<byte> reader, long count)
    {
        if (reader.Remaining < count) return false;
        reader.Advance(count);
        return true;
    }

    private static bool TryReadVarint(ref SequenceReader<byte> reader, out ulong value)
    {
        value = 0;
        for (int shift = 0; shift < 64; shift += 7)
        {
            if (!reader.TryRead(out byte b)) return false;
            value |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80) return true;
        }
        return false;
    }

    // proto3 leaves fields at their default out; int32 is sign-extended to 64 bits, as protobuf does.
    private static int Int32FieldSize(int value) => value == 0 ? 0 : 1 + VarintSize((ulong)(long)value);

    private static int UInt64FieldSize(ulong value) => value == 0 ? 0 : 1 + VarintSize(value);

    private static int WriteInt32Field(Span<byte> destination, int field, int value) => WriteUInt64Field(destination, field, (ulong)(long)value);

    private static int WriteUInt64Field(Span<byte> destination, int field, ulong value)
    {
        if (value == 0) return 0;
        destination[0] = (byte)(field << 3 | WireVarint);
        return 1 + WriteVarint(destination[1..], value);
    }

    private static int VarintSize(ulong value) => value == 0 ? 1 : (64 - System.Numerics.BitOperations.LeadingZeroCount(value) + 6) / 7;

    private static int WriteVarint(Span<byte> destination, ulong value)
    {
        int at = 0;
        while (value >= 0x80)
        {
            destination[at++] = (byte)(value | 0x80);
            value >>= 7;
        }
        destination[at++] = (byte)value;
        return at;
    }
}

/// <summary>The fields of a Data frame other than its payload.</summary>
internal readonly record struct DataHeader(int Context, int Source, int Tag, ulong Sequence, bool Synchronous, int TypeCode, bool IsArray,
    string TypeName, long TotalLength)
{
    public static DataHeader Of(Data data) =>
        new(data.Context, data.Source, data.Tag, data.Sequence, data.Synchronous, data.TypeCode, data.IsArray, data.TypeName, data.TotalLength);
}
