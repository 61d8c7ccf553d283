using System.Collections.Immutable;
using Grpc.Core;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// Which stream carries this rank's messages to each peer. The rule keeps MPI non-overtaking: all of a rank's
/// messages to one peer travel on one stream, in order, for the whole job. The first send to a peer takes the
/// stream that peer already opened to this rank, if one is open (its responses carry them), and otherwise dials the
/// peer's route (the new call's requests carry them): the peer's endpoint, or this rank's domain's gateway with a relay
/// preamble naming the peer. Once chosen, a stream never changes. So a pair of ranks normally shares one Connect call.
/// When both dial at the same moment, each before the other's call arrived, the pair ends up with two calls, each
/// carrying one direction's messages: correct, just not minimal. Each dialed call has a connection of its own.
/// Peers are named by job rank; the arrays grow when a spawn adds ranks to the job, or when a spawned rank dials
/// this one before this one heard of it.
/// </summary>
internal sealed class PeerStreams
{
    private readonly RankIdentity _identity;
    private readonly RpcSecurity _endpointSecurity;
    private readonly MatchingEngine _engine;
    private readonly Lock _lock = new(); // over the arrays below (and their growth) and the choice of a stream
    private Task<StreamSender>?[] _senders;
    private StreamSender?[] _openSenders; // the senders once open, read without the lock on every send
    private ServedStream?[] _offered; // a call the peer opened, not (yet) chosen, still being read
    private ImmutableArray<Route> _routes = []; // default for a rank this one has no link to
    private volatile bool _closing;

    /// <param name="identity">This rank.</param>
    /// <param name="engine">Where arriving messages go.</param>
    /// <param name="endpointSecurity">This rank's endpoint's security, whose certificate it presents to peers that listen with TLS.</param>
    public PeerStreams(RankIdentity identity, MatchingEngine engine, RpcSecurity endpointSecurity)
    {
        _identity = identity;
        _engine = engine;
        _endpointSecurity = endpointSecurity;
        int ranks = identity.WorldFirst + identity.Size;
        _senders = new Task<StreamSender>?[ranks];
        _openSenders = new StreamSender?[ranks];
        _offered = new ServedStream?[ranks];
        Inbound = new InboundStreams(identity, engine, this);
    }

    /// <summary>The receiving half, which serves this rank's endpoint and reads the responses of dialed calls.</summary>
    public InboundStreams Inbound { get; }

    /// <summary>
    /// How this rank reaches each peer, indexed by job rank; known once the master has answered, before the first
    /// send, and again each time a spawn adds ranks.
    /// </summary>
    public void UseRoutes(ImmutableArray<Route> routes)
    {
        lock (_lock)
        {
            Grow(routes.Length);
            _routes = routes;
        }
    }

    /// <summary>What sends this rank's messages to <paramref name="peer"/>, chosen (and dialed if need be) on first use.</summary>
    /// <exception cref="RpcException">The peer's route could not be dialed.</exception>
    public StreamSender SenderTo(int peer) => Volatile.Read(ref _openSenders[peer]) ?? ChooseAsync(peer).GetAwaiter().GetResult();

    /// <summary>A call the peer opened: this rank may send its own messages back on it while it is open.</summary>
    public void Offer(ServedStream served)
    {
        // A dial that failed carried nothing, so the peer's call may still take its place.
        lock (_lock)
        {
            Grow(served.Peer + 1);
            if (_senders[served.Peer] is null or { IsFaulted: true }) _offered[served.Peer] = served;
        }
    }

    /// <summary>The peer ended its requests (or the call broke): the call is no longer on offer.</summary>
    /// <returns>Whether this rank chose the call for its messages, so its handler must wait for them.</returns>
    public bool Withdraw(ServedStream served)
    {
        lock (_lock)
        {
            if (_offered[served.Peer] == served) _offered[served.Peer] = null;
            return served.Chosen;
        }
    }

    /// <summary>
    /// Whether a stream with <paramref name="peer"/> that breaks between messages must abort this rank: one through the
    /// gateways while this rank still runs. Messages may have been inside the relays when a hop failed, and nothing
    /// else would tell the receiver they are not coming. (A direct stream that breaks may just be a peer that finished.)
    /// </summary>
    public bool BreakAborts(int peer) => !_closing && (uint)peer < (uint)_routes.Length && _routes[peer].Kind == RouteKind.Gateway;

    /// <summary>The pair with <paramref name="peer"/> as errors name it: both ranks, their domains, and the route between them.</summary>
    public string Describe(int peer) => (uint)peer < (uint)_routes.Length && _routes[peer] is { Kind: RouteKind.Gateway } route
        ? $"rank {route.From.Rank} ({route.From.DomainName}) and rank {peer} ({route.To.DomainName}), {route}"
        : $"rank {_identity.Rank} and rank {peer}";

    /// <summary>Writes what every sender has queued (briefly), then closes the streams this rank sends on.</summary>
    public async ValueTask DisposeAsync()
    {
        _closing = true;
        List<StreamSender> senders;
        lock (_lock) senders = [.. _senders.Where(sender => sender is { IsCompletedSuccessfully: true }).Select(sender => sender!.Result)];
        // At once: each dialed call waits (briefly) for its peer to end the responses, each served one for the requests.
        await Task.WhenAll([.. senders.Select(sender => sender.DisposeAsync().AsTask()), Inbound.CloseServedAsync()]).ConfigureAwait(false);
    }

    private void Grow(int ranks)
    {
        if (ranks <= _senders.Length) return;
        Array.Resize(ref _senders, ranks);
        Array.Resize(ref _offered, ranks);
        // A sender written into the old array meanwhile is not lost: _senders (under the lock) still holds its task.
        var open = _openSenders;
        Array.Resize(ref open, ranks);
        Volatile.Write(ref _openSenders, open);
    }

    private async Task<StreamSender> ChooseAsync(int peer)
    {
        Task<StreamSender> opening;
        lock (_lock)
        {
            if (_senders[peer] is { IsFaulted: false } existing) opening = existing;
            else if (_offered[peer] is { } served)
            {
                _offered[peer] = null;
                served.Chosen = true;
                opening = _senders[peer] = Task.FromResult(served.Writer);
            }
            else opening = _senders[peer] = DialAsync(peer);
        }
        var sender = await opening.ConfigureAwait(false);
        Volatile.Write(ref _openSenders[peer], sender);
        return sender;
    }

    /// <summary>
    /// A route to a rank that listens with TLS pins the certificate the rank registered and presents this rank's own
    /// (both ends listen with TLS beyond loopback, as the agents bind them), directly or through the gateways, which
    /// relay the TLS bytes unopened; h2c otherwise (a loopback endpoint, an insecure cluster).
    /// </summary>
    private RpcSecurity SecurityOf(Route route) =>
        route.To.CertificatePin.Length > 0 ? _endpointSecurity.DialingPinned(route.To.CertificatePin) : RpcSecurity.Insecure;

    private async Task<StreamSender> DialAsync(int peer)
    {
        // Through the gateways: a TCP connection to this rank's gateway, whose preamble states the route and proves it
        // with the job key; the gateways check it, and relay the rest (TLS and HTTP/2 to the peer) as opaque bytes.
        var route = _routes[peer];
        var call = route.Kind == RouteKind.Gateway
            ? await GrpcStream.DialThroughAsync(new Uri(route.Target), RelayPreamble.For(_identity.JobToken, _identity.JobId, _identity.Rank, peer),
                new Uri(route.To.Endpoint), ServicePaths.Connect, SecurityOf(route)).ConfigureAwait(false)
            : await GrpcStream.DialAsync(new Uri(route.Target), ServicePaths.Connect, SecurityOf(route)).ConfigureAwait(false);
        try
        {
            call.Write(new Frame { Hello = new Hello { JobId = _identity.JobId, JobToken = _identity.JobToken, SourceWorldRank = _identity.Rank, DestinationWorldRank = peer } });
        }
        catch
        {
            call.Dispose();
            throw;
        }
        var dialed = new DialedStream(call, route) { Chosen = true };
        Inbound.Receive(dialed);
        return dialed.Writer;
    }
}
