using Pmpi.Devices;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Collectives;

/// <summary>
/// The neighbourhood collectives (MPI-3 §7.6): each rank sends one message to each of its topology's neighbours and
/// receives one from each, in the communicator's collective context. Slots follow MPI's order
/// (<see cref="TopologicalCommunicator.Neighborhood"/>); a slot whose neighbour is <see cref="Communicator.ProcNull"/>
/// sends nothing and receives default. Two ranks may be neighbours through several slots (a periodic dimension of
/// one or two ranks, a graph with repeated edges): their messages match in the order sent, so each rank posts its
/// receives in the order its neighbours send (<see cref="Neighborhood.ReceiveOrder"/>).
/// </summary>
internal static class NeighborhoodAlgorithms
{
    /// <summary>Sends <paramref name="outgoing"/>(slot) to each slot's destination; gives what each slot's source sent.</summary>
    public static TMessage[] Exchange<TMessage>(TopologicalCommunicator comm, CollectiveStep step, Func<int, TMessage> outgoing)
    {
        var neighborhood = comm.Neighborhood;
        int tag = CollectiveTag.Of(step), slots = neighborhood.Sources.Length;
        var receives = new ReceiveOperation?[slots];
        foreach (int slot in neighborhood.ReceiveOrder)
        {
            int source = neighborhood.Sources[slot];
            if (source != Communicator.ProcNull)
                receives[slot] = comm.PostReceive(source, tag, comm.CollectiveContext, Codec<TMessage>.Instance.ReturnsNewArray);
        }
        var sends = new SendOperation[neighborhood.Destinations.Length];
        for (int slot = 0; slot < sends.Length; slot++)
            sends[slot] = comm.StartSend(outgoing(slot), neighborhood.Destinations[slot], tag, comm.CollectiveContext, synchronous: false);
        var received = new TMessage[slots];
        for (int slot = 0; slot < slots; slot++)
            if (receives[slot] is { } receive) received[slot] = comm.Decode<TMessage>(comm.Complete(receive), comm.CollectiveContext);
        foreach (var send in sends) comm.Complete(send);
        return received;
    }
}

/// <summary>
/// The ranks a topological communicator's neighbourhood collectives receive from and send to, by slot in MPI's order,
/// and the order in which the receives are posted so that each pair of ranks matches its messages as they were sent.
/// </summary>
internal sealed record Neighborhood(int[] Sources, int[] Destinations, int[] ReceiveOrder);
