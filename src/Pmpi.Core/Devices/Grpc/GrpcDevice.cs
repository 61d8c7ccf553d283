using System.Collections.Immutable;
using System.Net;
using System.Runtime.InteropServices;
using Pmpi.Devices.SharedMemory;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The device of ranks that are processes: each rank serves RankTransport on its own endpoint (PMPI's HTTP/2, <see cref="GrpcStreamListener"/>) and, once the
/// rank table is known, holds a link per peer along the route <see cref="JobRoutes"/> chose for it: a
/// <see cref="SharedMemoryLink"/> to a peer on the same node, a <see cref="GrpcLink"/> to any other. Its peers are
/// its world's ranks and, in a job whose ranks spawn, the ranks its world spawned or was spawned by (MPI's connected
/// processes); it has no link to the job's other ranks, which no communicator of its can name.
/// </summary>
internal sealed class GrpcDevice : IDevice
{
    private readonly RankIdentity _identity;
    private readonly GrpcStreamListener? _server; // none when every peer is on this node (RankIdentity.NodeLocal)
    private readonly PeerStreams _peers;
    private readonly TaskCompletionSource<Func<string, bool>> _peerPins;
    private ImmutableHashSet<string> _pins = []; // the peers' certificates (SHA-256, upper-case hex) the endpoint admits
    private readonly Lock _connecting = new();
    private readonly SharedMemoryReader _sharedMemory;

    private GrpcDevice(RankIdentity identity, GrpcStreamListener? server, MatchingEngine engine, PeerStreams peers, TaskCompletionSource<Func<string, bool>> peerPins)
    {
        _identity = identity;
        _server = server;
        Engine = engine;
        _peers = peers;
        _peerPins = peerPins;
        _sharedMemory = new SharedMemoryReader(engine);
    }

    public int Rank => _identity.Rank;

    public int Size => _identity.Size;

    public int WorldFirst => _identity.WorldFirst;

    public MatchingEngine Engine { get; }

    public string ProcessorName => System.Environment.MachineName;

    /// <summary>Empty until <see cref="Connect"/>.</summary>
    public ImmutableArray<ILink> Links { get; private set; } = [];

    /// <summary>Empty until <see cref="Connect"/>.</summary>
    public ImmutableArray<RankPlace> Places { get; private set; } = [];

    private ImmutableArray<Route> _routes = [];

    /// <summary>Where this rank's RankTransport endpoint listens (what it registers with the master).</summary>
    public Uri? Endpoint => _server?.Address;

    /// <summary>The SHA-256 of the endpoint's TLS certificate, which it registers for peers to pin; empty for h2c.</summary>
    public byte[] CertificatePin { get; private init; } = [];

    /// <summary>How many Connect calls this rank's endpoint has accepted: the streams its peers opened to it.</summary>
    internal int StreamsAccepted => _peers.Inbound.Accepted;

    /// <summary>Opens this rank's endpoint; peers may open streams to it from then on.</summary>
    public static GrpcDevice Open(RankIdentity identity)
    {
        var engine = new MatchingEngine();
        // Beyond loopback the endpoint speaks TLS with a certificate made now, which peers pin from the rank table and
        // this rank presents when it dials them; it admits only the peers' certificates (once the table gives them)
        // and the cluster's (its domain's gateway).
        var peerPins = new TaskCompletionSource<Func<string, bool>>(TaskCreationOptions.RunContinuationsAsynchronously);
        byte[] pin = [];
        var security = identity.EncryptStreams && !identity.NodeLocal ? RpcSecurity.RankEndpoint(peerPins.Task, out pin) : RpcSecurity.Insecure;
        // Before the endpoint opens: a peer that got the table first may open a stream to this rank at once.
        var peers = new PeerStreams(identity, engine, security);
        // A job all on this node links by shared memory alone: no peer would dial this rank, so it serves nothing.
        var server = identity.NodeLocal ? null : GrpcStreamListener.Start(IPAddress.Parse(identity.BindAddress), 0, ServicePaths.Connect, peers.Inbound.Admit, security);
        return new GrpcDevice(identity, server, engine, peers, peerPins) { CertificatePin = pin };
    }

    /// <summary>The route rule's answer, its refusal as this rank's Transport error.</summary>
    private static T Routed<T>(Func<T> resolve)
    {
        try
        {
            return resolve();
        }
        catch (RouteException e)
        {
            throw new MpiException(ErrorClass.Transport, e.Message, e);
        }
    }

    /// <summary>
    /// Chooses this rank's route to each of <paramref name="peers"/> from the job's rank table; each link dials on
    /// its first send. Called once the master has answered (the world's ranks, and the parents of a spawned world),
    /// then again for each world this rank takes part in spawning; links made before stay as they are.
    /// </summary>
    /// <exception cref="MpiException">Transport: a peer cannot be reached (before any message is sent).</exception>
    public void Connect(RankTable table, IEnumerable<int> peers)
    {
        ArgumentNullException.ThrowIfNull(table);
        ArgumentNullException.ThrowIfNull(peers);
        var routes = Routed(() => JobRoutes.FromTable(table));
        lock (_connecting)
        {
            var linked = Links;
            bool IsLinked(int rank) => rank < linked.Length && linked[rank] is not UnconnectedLink;
            // Loops rather than LINQ here: LINQ over routes, which are structs, is compiled at run time, and at a
            // rank's start that JIT cost more than everything else Connect does.
            var resolved = new Route[routes.Size];
            for (int rank = 0; rank < resolved.Length; rank++)
            {
                if (IsLinked(rank)) resolved[rank] = _routes[rank];
            }
            var pins = _pins;
            foreach (var peer in peers)
            {
                if (resolved[peer].To is not null) continue;
                var route = resolved[peer] = Routed(() => routes.Resolve(Rank, peer));
                if (_server is null && route.Kind is not (RouteKind.Self or RouteKind.SharedMemory))
                    throw new MpiException(ErrorClass.Transport, $"Rank {Rank} was launched without an endpoint (its agent was told every rank runs on its node), but rank {route.To.Rank} runs on node '{route.To.Node}'.");
                if (route.To.CertificatePin.Length > 0) pins = pins.Add(Convert.ToHexString(route.To.CertificatePin));
            }
            _routes = ImmutableCollectionsMarshal.AsImmutableArray(resolved);
            _peers.UseRoutes(_routes);
            Places = routes.Places;
            _pins = pins;
            _peerPins.TrySetResult(pin => _pins.Contains(pin));
            // Every same-node pair is mapped now, by both ranks (a receiver must be reading before the first send); the
            // memory itself is taken only as the rings are first written.
            var links = new ILink[routes.Size];
            var sharedMemory = new List<SharedMemoryLink>();
            try
            {
                for (int rank = 0; rank < links.Length; rank++)
                {
                    var route = resolved[rank];
                    links[rank] = IsLinked(rank) ? linked[rank] : route.To is null ? new UnconnectedLink(Rank, rank) : route.Kind switch
                    {
                        RouteKind.Self => new SelfLink(Engine),
                        RouteKind.SharedMemory => Add(sharedMemory, new SharedMemoryLink(_identity.JobToken, Engine, Rank, rank)),
                        _ => new GrpcLink(_peers, route),
                    };
                }
            }
            finally
            {
                if (sharedMemory.Count > 0) _sharedMemory.Add(sharedMemory);
            }
            Links = [.. links];
            // A waiting thread polls the rank's rings and connections (both read messages into the engine on the
            // polling thread), busily when the node has a core for each of its ranks and yielding when not, as Open
            // MPI polls: blocking would cost a wake-up per message.
            Engine.Progress = _sharedMemory.HasLinks ? new PolledTogether(_sharedMemory, _peers.Inbound) : _peers.Inbound;
            var node = Places[Rank];
            Engine.Spin.Policy = SpinPolicy.For(Places.Count(place => place.Node == node.Node && place.Domain == node.Domain));
        }

        static SharedMemoryLink Add(List<SharedMemoryLink> links, SharedMemoryLink link)
        {
            links.Add(link);
            return link;
        }
    }

    public void Dispose()
    {
        // Handshakes still waiting for the table end now.
        _peerPins.TrySetCanceled();
        _sharedMemory.Dispose();
        _peers.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _server?.Dispose();
    }
}

/// <summary>A rank's shared-memory rings and its network connections, polled by one waiting thread.</summary>
internal sealed class PolledTogether(IPolledLinks first, IPolledLinks second) : IPolledLinks
{
    public void Poll()
    {
        first.Poll();
        second.Poll();
    }

    public bool Delivering => first.Delivering || second.Delivering;

    public void Sleeping()
    {
        first.Sleeping();
        second.Sleeping();
    }

    /// <summary>Sleeps on the first links (the rings); the second's own threads read them meanwhile.</summary>
    public bool SleepOn(Completion completion)
    {
        second.Sleeping();
        return first.SleepOn(completion);
    }
}
