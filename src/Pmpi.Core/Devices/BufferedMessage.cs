using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

internal static class BufferedMessage
{
    /// <summary>
    /// A message that owns its payload: the sender's rented buffer when there is one, else a copy, so the send
    /// completes without waiting for the receiver (eager protocol).
    /// </summary>
    public static Message Of(Envelope envelope, OutgoingPayload payload, IDeliveryReceipt? receipt = null)
    {
        if (payload.Rented is null) payload = RawTypes.Copy(payload.Type, payload.Bytes.Span);
        return new Message(envelope, payload.Type, payload.Bytes, payload.Rented, receipt);
    }
}
