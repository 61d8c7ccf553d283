using System.Buffers;
using System.Buffers.Binary;
using Google.Protobuf;

namespace Pmpi.Rpc.Internal;

/// <summary>
/// gRPC's length-prefixed messages (PROTOCOL-HTTP2.md): a compressed flag byte, a 4-byte big-endian length, then
/// the protobuf bytes. No compression is negotiated, so a set flag is a protocol error.
/// </summary>
internal static class MessageFraming
{
    public const int HeaderSize = 5;

    public static void Write(IBufferWriter<byte> destination, IMessage message)
    {
        int size = message.CalculateSize();
        var header = destination.GetSpan(HeaderSize);
        header[0] = 0;
        BinaryPrimitives.WriteUInt32BigEndian(header[1..], (uint)size);
        destination.Advance(HeaderSize);
        message.WriteTo(destination);
    }

    /// <summary>Takes one whole message off the front of <paramref name="buffer"/>; false if more bytes are needed.</summary>
    /// <exception cref="RpcException">A compressed message, or one larger than <paramref name="maxMessageSize"/>.</exception>
    public static bool TryReadMessage(ref ReadOnlySequence<byte> buffer, int maxMessageSize, out ReadOnlySequence<byte> message)
    {
        message = default;
        if (buffer.Length < HeaderSize) return false;
        Span<byte> header = stackalloc byte[HeaderSize];
        buffer.Slice(0, HeaderSize).CopyTo(header);
        if (header[0] != 0) throw new RpcException(StatusCode.Internal, "Received a compressed message, but no compression was negotiated.");
        uint length = BinaryPrimitives.ReadUInt32BigEndian(header[1..]);
        if (length > maxMessageSize)
            throw new RpcException(StatusCode.ResourceExhausted, $"Received message of {length} bytes exceeds the limit of {maxMessageSize} (see RpcOptions.MaxMessageSize).");
        if (buffer.Length < HeaderSize + length) return false;
        message = buffer.Slice(HeaderSize, length);
        buffer = buffer.Slice(HeaderSize + length);
        return true;
    }
}
