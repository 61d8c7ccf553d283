using System.Buffers;
using System.Buffers.Binary;
using Google.Protobuf;
using Grpc.Core;

namespace Pmpi.Rpc.Internal;

/// <summary>
/// gRPC's length-prefixed messages (grpc/doc/PROTOCOL-HTTP2.md): a compressed flag byte, a 4-byte big-endian length,
/// then the protobuf bytes. No compression is negotiated (we send no grpc-accept-encoding), so a set flag is a
/// protocol error.
/// </summary>
internal static class MessageFraming
{
    /// <summary>The prefix before each message: flag byte and length.</summary>
    public const int HeaderSize = 5;

    /// <summary>Writes one prefixed message straight into <paramref name="destination"/> (no intermediate array).</summary>
    /// <exception cref="RpcException">RESOURCE_EXHAUSTED: the message is larger than <paramref name="maxMessageSize"/>.</exception>
    public static void Write(IBufferWriter<byte> destination, IMessage message, int maxMessageSize)
    {
        int size = message.CalculateSize();
        if (size > maxMessageSize)
            throw new RpcException(new Status(StatusCode.ResourceExhausted,
                $"Sending message of {size} bytes exceeds the limit of {maxMessageSize} (see RpcOptions.MaxMessageSize)."));
        WriteHeader(destination, size);
        message.WriteTo(destination);
    }

    /// <summary>Writes the prefix of an uncompressed message of <paramref name="size"/> bytes.</summary>
    public static void WriteHeader(IBufferWriter<byte> destination, int size)
    {
        WriteHeader(destination.GetSpan(HeaderSize), size);
        destination.Advance(HeaderSize);
    }

    /// <summary>Writes the prefix of an uncompressed message of <paramref name="size"/> bytes into the first <see cref="HeaderSize"/> bytes of <paramref name="header"/>.</summary>
    public static void WriteHeader(Span<byte> header, int size)
    {
        header[0] = 0;
        BinaryPrimitives.WriteUInt32BigEndian(header[1..], (uint)size);
    }

    /// <summary>Takes one whole message off the front of <paramref name="buffer"/>; false if more bytes are needed.</summary>
    /// <param name="buffer">What has arrived; on success, what is left after the message.</param>
    /// <param name="maxMessageSize">The largest message accepted (RpcOptions.MaxMessageSize).</param>
    /// <param name="message">The protobuf bytes of the message, a slice of <paramref name="buffer"/>.</param>
    /// <exception cref="RpcException">
    /// INTERNAL for a compressed message; RESOURCE_EXHAUSTED for one larger than <paramref name="maxMessageSize"/>,
    /// detected from the prefix alone so an oversized message is never buffered.
    /// </exception>
    public static bool TryReadMessage(ref ReadOnlySequence<byte> buffer, int maxMessageSize, out ReadOnlySequence<byte> message)
    {
        message = default;
        if (buffer.Length < HeaderSize) return false;
        Span<byte> header = stackalloc byte[HeaderSize];
        buffer.Slice(0, HeaderSize).CopyTo(header);
        if (header[0] != 0)
            throw new RpcException(new Status(StatusCode.Internal, header[0] == 1
                ? "Received a compressed message, but no compression was negotiated."
                : $"Received a message with an invalid compressed flag {header[0]}."));
        uint length = BinaryPrimitives.ReadUInt32BigEndian(header[1..]);
        if (length > (uint)maxMessageSize)
            throw new RpcException(new Status(StatusCode.ResourceExhausted,
                $"Received message of {length} bytes exceeds the limit of {maxMessageSize} (see RpcOptions.MaxMessageSize)."));
        if (buffer.Length < HeaderSize + length) return false;
        message = buffer.Slice(HeaderSize, length);
        buffer = buffer.Slice(HeaderSize + length);
        return true;
    }
}
