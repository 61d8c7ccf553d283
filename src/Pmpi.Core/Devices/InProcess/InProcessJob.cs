using System.Collections.Immutable;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc.Routing;

namespace Pmpi.Devices.InProcess;

/// <summary>
/// The shared-memory device of ranks that are threads of one process (MPJ Express's multicore device): a send is a
/// call into the receiver's matching engine. Small messages are copied into a pooled buffer and the send completes
/// at once; large ones are copied once, straight from the sender's array into the receiver's, with the sender held
/// until then (rendezvous). It is its ranks' job control too: an abort reaches every rank's engine at once.
/// </summary>
internal sealed class InProcessJob : IThreadedJob, IJobControl
{
    /// <summary>Messages up to this size are buffered (eager); larger ones wait for their receive.</summary>
    public const int EagerLimit = 64 * 1024;

    private readonly MatchingEngine[] _engines;
    private readonly Link[] _links; // every rank's link to each rank, shared: a link holds nothing of its sender
    private readonly ImmutableArray<RankPlace> _places;

    /// <param name="size">Number of ranks.</param>
    /// <param name="places">
    /// Where each rank is taken to run, (node, domain) by rank: all on this machine in no domain by default; other
    /// places let tests run the topology-aware collectives in one process.
    /// </param>
    public InProcessJob(int size, IReadOnlyList<(string Node, string Domain)>? places = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        if (places is not null && places.Count != size) throw new ArgumentException($"{places.Count} places for {size} ranks.", nameof(places));
        _places = [.. Enumerable.Range(0, size).Select(rank => places is null
            ? new RankPlace(rank, System.Environment.MachineName, "", "", "")
            : new RankPlace(rank, places[rank].Node, places[rank].Domain, "", ""))];
        _engines = new MatchingEngine[size];
        _links = new Link[size];
        for (int i = 0; i < size; i++)
        {
            _engines[i] = new MatchingEngine { Spin = { Policy = SpinPolicy.For(size) } }; // every rank a thread of this node
            _links[i] = new Link(_engines[i]);
        }
    }

    public int Size => _engines.Length;

    public (IDevice Device, IJobControl Control) Start(int rank) => (new Device(this, rank), this);

    public void Abort(MpiException reason)
    {
        foreach (var engine in _engines) engine.Abort(reason);
    }

    public void Dispose()
    {
    }

    private sealed class Device : IDevice
    {
        public Device(InProcessJob job, int rank)
        {
            Rank = rank;
            Size = job.Size;
            Engine = job._engines[rank];
            ImmutableArray<ILink> links = [.. job._links];
            Links = links.SetItem(rank, new SelfLink(Engine));
            Places = job._places;
        }

        public int Rank { get; }

        public int Size { get; }

        public int WorldFirst => 0;

        public MatchingEngine Engine { get; }

        public string ProcessorName => System.Environment.MachineName;

        public ImmutableArray<ILink> Links { get; }

        public ImmutableArray<RankPlace> Places { get; }

        public void Dispose()
        {
        }
    }

    /// <summary>Any rank's link to the rank that owns <paramref name="target"/>.</summary>
    private sealed class Link(MatchingEngine target) : ILink
    {
        public LinkKind Kind => LinkKind.InProcess;

        public SendOperation Send(Envelope envelope, OutgoingPayload payload, bool synchronous)
        {
            if (!synchronous && payload.Bytes.Length <= EagerLimit)
            {
                target.Deliver(BufferedMessage.Of(envelope, payload));
                return SendOperation.Done;
            }
            var operation = new SendOperation();
            target.Deliver(new Message(envelope, payload.Type, payload.Bytes, payload.Rented, operation));
            return operation;
        }
    }
}
