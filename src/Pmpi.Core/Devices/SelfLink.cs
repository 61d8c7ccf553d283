using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

/// <summary>
/// A rank's link to itself. Always buffered: MPI programs may send to themselves before they receive; a synchronous
/// send still completes only when the receive matches it.
/// </summary>
internal sealed class SelfLink(MatchingEngine engine) : ILink
{
    public LinkKind Kind => LinkKind.Self;

    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        var operation = synchronous ? new SendOperation() : SendOperation.Done;
        engine.Deliver(BufferedMessage.Of(envelope, payload, synchronous ? operation : null));
        return operation;
    }
}
