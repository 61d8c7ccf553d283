using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices;

/// <summary>
/// The place of a job rank this one is not connected to: a rank of a world that neither this rank's world spawned nor
/// was spawned by. No communicator of this rank can name it, so a send here is a mistake in PMPI, reported as such.
/// </summary>
internal sealed class UnconnectedLink(int rank, int peer) : ILink
{
    public LinkKind Kind => LinkKind.Unconnected;

    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous) =>
        throw new MpiException(ErrorClass.Transport, $"Rank {rank} has no link to rank {peer}: neither one's world spawned the other's.");
}
