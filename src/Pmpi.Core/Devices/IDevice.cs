using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

/// <summary>
/// A transport between the ranks of one job, seen from one rank. It moves messages into the destination rank's
/// <see cref="MatchingEngine"/>, preserving order per (sender, receiver) pair; all MPI semantics live above it.
/// </summary>
internal interface IDevice : IDisposable
{
    /// <summary>This rank in the job's world.</summary>
    int Rank { get; }

    /// <summary>Number of ranks in the job's world.</summary>
    int Size { get; }

    /// <summary>Where messages for this rank are matched.</summary>
    MatchingEngine Engine { get; }

    /// <summary>A name for the node this rank runs on (MPI_Get_processor_name).</summary>
    string ProcessorName { get; }

    /// <summary>
    /// Sends to world rank <paramref name="destination"/>. A borrowed payload (no <see cref="OutgoingPayload.Rented"/>)
    /// stays valid until the returned operation completes; a rented one becomes the device's. The operation completes
    /// when the sender may reuse its buffer, and for <paramref name="synchronous"/> sends only once the receiver has
    /// matched the message (MPI-4.1 §3.4).
    /// </summary>
    SendOperation Send(int destination, Envelope envelope, OutgoingPayload payload, bool synchronous);

    /// <summary>Aborts the whole job: every rank's pending and later operations fail with <paramref name="reason"/>.</summary>
    void Abort(MpiException reason);
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
