using System.Buffers;
using Pmpi.Matching;

namespace Pmpi.Payloads;

/// <summary>
/// Where a link reassembles a payload as it arrives: a pooled buffer; or, for an array of a primitive type from
/// <see cref="DirectArrayMinimum"/> bytes that the receive it will match returns as a new array, that array, so the
/// receive returns it without copying. (A receive into the caller's own array copies either way: for it a new array
/// per message would only cost.)
/// </summary>
internal readonly record struct IncomingBuffer(Memory<byte> Bytes, byte[]? Rented, Array? Elements)
{
    /// <summary>From this many bytes a primitive array is read straight into its own array; below, a pooled buffer is cheaper.</summary>
    public const int DirectArrayMinimum = 64 * 1024;

    /// <summary>A buffer for <paramref name="length"/> bytes of a payload of <paramref name="type"/>.</summary>
    /// <param name="type">The payload's type.</param>
    /// <param name="length">Its length in bytes.</param>
    /// <param name="receiver">The engine whose receive will take it, asked whether that receive returns a new array.</param>
    /// <param name="envelope">The message's envelope.</param>
    public static IncomingBuffer For(PayloadType type, int length, MatchingEngine receiver, Envelope envelope)
    {
        if (type.IsArray && length >= DirectArrayMinimum && receiver.NextReceiveReturnsNewArray(envelope)
            && RawTypes.NewArray(type.Code, length) is { } elements)
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
