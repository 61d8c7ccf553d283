using System.Buffers;
using System.Runtime.CompilerServices;
using Pmpi.Matching;

namespace Pmpi.Payloads;

/// <summary>
/// Where a link reassembles a payload as it arrives: a buffer (<see cref="PayloadBuffers"/>); or, for an array of a
/// primitive type from <see cref="DirectArrayMinimum"/> bytes, the array its receive ends with: the caller's own (from
/// the element the receive names on) when a receive from one source was posted with one of the payload's
/// type that can hold it (<see cref="ReceiveTarget"/>), or a new one when the receive returns a new array. Either way
/// the receive takes it without copying.
/// </summary>
internal readonly record struct IncomingBuffer(Memory<byte> Bytes, byte[]? Rented, Array? Elements)
{
    /// <summary>From this many bytes an array is read straight into the array its receive ends with; below, a buffer is cheaper.</summary>
    public const int DirectArrayMinimum = 64 * 1024;

    /// <summary>A buffer for <paramref name="length"/> bytes of a payload of <paramref name="type"/>.</summary>
    /// <param name="type">The payload's type.</param>
    /// <param name="length">Its length in bytes.</param>
    /// <param name="receiver">The engine whose receive will take it, asked which receive that is.</param>
    /// <param name="envelope">The message's envelope.</param>
    public static IncomingBuffer For(PayloadType type, int length, MatchingEngine receiver, Envelope envelope)
    {
        if (type.IsArray && length >= DirectArrayMinimum && receiver.NextReceive(envelope) is { } receive)
        {
            if (receive.Into is { } into && into.Holds(type, length))
                return new(new ArrayBytes(into.Elements, into.ByteOffset + length).Memory[into.ByteOffset..], null, into.Elements);
            if (receive.ReturnsNewArray && RawTypes.NewArray(type.Code, length) is { } elements)
                return new(new ArrayBytes(elements, length).Memory, null, elements);
        }
        var buffer = PayloadBuffers.Get(length, out var rented);
        return new(buffer.AsMemory(0, length), rented, null);
    }

    /// <summary>The message, once every byte arrived; it owns the buffer from then on.</summary>
    public Message ToMessage(Envelope envelope, PayloadType type, IDeliveryReceipt? receipt) => new(envelope, type, Bytes, Rented, receipt, Elements);

    /// <summary>Gives the buffer back when no message will be made of it.</summary>
    public void Return()
    {
        if (Rented is not null) ArrayPool<byte>.Shared.Return(Rented);
    }
}

/// <summary>
/// The caller's array that a receive of an array of a raw type fills (<see cref="ReceiveOperation.Into"/>),
/// from one of its elements on: a link may read a payload of its type straight into it there.
/// </summary>
internal sealed class ReceiveTarget(Array elements, int at, PayloadType type, int elementSize)
{
    public Array Elements { get; } = elements;

    /// <summary>Where in <see cref="Elements"/> the payload goes, in bytes.</summary>
    public int ByteOffset { get; } = at * elementSize;

    /// <summary>Whether a payload of <paramref name="payload"/>'s type and <paramref name="length"/> bytes is whole elements that fit.</summary>
    public bool Holds(PayloadType payload, int length) =>
        payload == type && length % elementSize == 0 && length / elementSize <= Elements.Length - at;

    /// <summary>
    /// The target for <paramref name="array"/> from element <paramref name="at"/> on, if that part is large enough to
    /// be read into directly; else null.
    /// </summary>
    public static ReceiveTarget? Of<T>(T[]? array, int at = 0)
    {
        if (array is null || Codec<T[]>.Instance is not RawArrayCodec<T> codec || (long)(array.Length - at) * Unsafe.SizeOf<T>() < IncomingBuffer.DirectArrayMinimum) return null;
        return new ReceiveTarget(array, at, codec.Type, Unsafe.SizeOf<T>());
    }
}
