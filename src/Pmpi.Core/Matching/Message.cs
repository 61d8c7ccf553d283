using System.Buffers;
using Pmpi.Payloads;

namespace Pmpi.Matching;

/// <summary>What a message is matched on: communicator context, source rank in that communicator, and tag.</summary>
internal readonly record struct Envelope(int Context, int Source, int Tag);

/// <summary>
/// Told when a message has been consumed by a matching receive, or dropped. Synchronous sends (MPI-4.1 §3.4) and
/// rendezvous transfers complete through it; a remote device turns it into an acknowledgement frame.
/// </summary>
internal interface IDeliveryReceipt
{
    void Delivered();

    void Failed(MpiException error);
}

/// <summary>A message that reached its destination rank: envelope, payload type and payload bytes.</summary>
internal sealed class Message(Envelope envelope, PayloadType type, ReadOnlyMemory<byte> payload, byte[]? rented = null,
    IDeliveryReceipt? receipt = null, Array? elements = null)
{
    private byte[]? _rented = rented;
    private IDeliveryReceipt? _receipt = receipt;

    public Envelope Envelope { get; } = envelope;

    public PayloadType Type { get; } = type;

    /// <summary>The payload; valid until <see cref="Release"/>.</summary>
    public ReadOnlyMemory<byte> Payload { get; } = payload;

    /// <summary>
    /// The array of the payload's element type that <see cref="Payload"/> lies in, when the link read a large array of
    /// a primitive type straight into one: the receive returns it instead of copying it.
    /// </summary>
    public Array? Elements { get; } = elements;

    /// <summary>Arrival order at the receiving engine, which decides wildcard matches (MPI-4.1 §3.5).</summary>
    internal long Arrival { get; set; }

    /// <summary>Called once the receiver has copied the payload out: returns pooled memory, completes the sender.</summary>
    public void Release()
    {
        if (Interlocked.Exchange(ref _rented, null) is { } rentedBuffer) ArrayPool<byte>.Shared.Return(rentedBuffer);
        Interlocked.Exchange(ref _receipt, null)?.Delivered();
    }

    /// <summary>Called when the message will never be consumed (job aborted, receive failed).</summary>
    public void Drop(MpiException error)
    {
        if (Interlocked.Exchange(ref _rented, null) is { } rentedBuffer) ArrayPool<byte>.Shared.Return(rentedBuffer);
        Interlocked.Exchange(ref _receipt, null)?.Failed(error);
    }
}
