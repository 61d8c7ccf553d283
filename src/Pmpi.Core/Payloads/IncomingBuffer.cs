using System.Buffers;
using Pmpi.Matching;

namespace Pmpi.Payloads;

/// <summary>
/// Where a link reassembles a payload as it arrives: a pooled buffer, or for an array of a primitive type from
/// <see cref="DirectArrayMinimum"/> bytes a new array of that type, which the receive then returns without copying.
/// </summary>
internal readonly record struct IncomingBuffer(Memory<byte> Bytes, byte[]? Rented, Array? Elements)
{
    /// <summary>From this many bytes a primitive array is read straight into its own array; below, a pooled buffer is cheaper.</summary>
    public const int DirectArrayMinimum = 64 * 1024;

    /// <summary>A buffer for <paramref name="length"/> bytes of a payload of <paramref name="type"/>.</summary>
    public static IncomingBuffer For(PayloadType type, int length)
    {
        if (type.IsArray && length >= DirectArrayMinimum && RawTypes.NewArray(type.Code, length) is { } elements)
            return new(new ArrayBytes(elements, length).Memory, null, elements);
        var rented = ArrayPool<byte>.Shared.Rent(length);
        return new(rented.AsMemory(0, length), rented, null);
    }

    /// <summary>The message, once every byte arrived; it owns the buffer from then on.</summary>
    public Message ToMessage(Envelope envelope, PayloadType type, IDeliveryReceipt? receipt) => new(envelope, type, Bytes, Rented, receipt, Elements);

    /// <summary>Gives the buffer back when no message will be made of it.</summary>
    public void Return()
    {
        if (Rented is not null) ArrayPool<byte>.Shared.Return(Rented);
    }
}
