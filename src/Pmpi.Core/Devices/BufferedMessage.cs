using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

internal static class BufferedMessage
{
    /// <summary>
    /// A message that owns its payload: the sender's rented buffer when there is one, else a pooled copy, so the
    /// send completes without waiting for the receiver (eager protocol).
    /// </summary>
    public static Message Of(Envelope envelope, OutgoingPayload payload, IDeliveryReceipt? receipt = null)
    {
        var rented = payload.Rented ?? RawTypes.Rent(payload.Type, payload.Bytes.Span).Rented!;
        return new Message(envelope, payload.Type, rented.AsMemory(0, payload.Bytes.Length), rented, receipt);
    }
}
