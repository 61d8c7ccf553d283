using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

/// <summary>
/// How one rank's messages reach one peer: a call into its matching engine (in-process, or the rank itself), or a
/// stream, direct or through the gateways. Each link keeps the order of its messages; a rank holds one per peer.
/// </summary>
internal interface ILink
{
    /// <summary>What carries the link's messages.</summary>
    LinkKind Kind { get; }

    /// <summary>
    /// Sends to the link's peer. A borrowed payload (no <see cref="OutgoingPayload.Rented"/>) stays valid until the
    /// returned operation completes; a rented one becomes the link's. The operation completes when the sender may
    /// reuse its buffer, and for <paramref name="synchronous"/> sends only once the receiver has matched the message
    /// (MPI-4.1 §3.4).
    /// </summary>
    /// <exception cref="MpiException">Transport: the peer cannot be reached.</exception>
    SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous);
}

/// <summary>A send in flight; completes when its buffer may be reused or, for a synchronous send, when matched.</summary>
internal sealed class SendOperation : Completion, IDeliveryReceipt
{
    /// <summary>A send that completed when it was handed over (eager).</summary>
    public static readonly SendOperation Done = CreateDone();

    public void Delivered() => TryComplete();

    public void Failed(MpiException error) => TryComplete(error);

    private static SendOperation CreateDone()
    {
        var done = new SendOperation();
        done.Delivered();
        return done;
    }
}
