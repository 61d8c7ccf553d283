using Grpc.Core;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// This rank's link to one peer over gRPC, direct or through the gateways as its <see cref="Route"/> says; the one
/// stream its messages travel on is chosen on the first send (<see cref="PeerStreams"/>).
/// </summary>
internal sealed class GrpcLink(PeerStreams streams, Route route) : ILink
{
    /// <summary>How this link reaches its peer.</summary>
    public Route Route => route;

    public LinkKind Kind => route.Kind == RouteKind.Gateway ? LinkKind.Gateway : LinkKind.Network;

    public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        try
        {
            return streams.SenderTo(route.To.Rank).Send(envelope, payload, synchronous);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Rank {route.From.Rank} cannot reach rank {route.To.Rank} ({route}) at {route.Target}: {StatusText.Of(e)}", e);
        }
    }
}
