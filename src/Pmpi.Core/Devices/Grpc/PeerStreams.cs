using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// Which stream carries this rank's messages to each peer. The rule keeps MPI non-overtaking: all of a rank's
/// messages to one peer travel on one stream, in order, for the whole job. The first send to a peer takes the
/// stream that peer already opened to this rank, if one is open (its responses carry them), and otherwise dials the
/// peer (the new call's requests carry them); once chosen, a link never moves. So a pair of ranks normally shares
/// one Connect call. When both dial at the same moment, each before the other's call arrived, the pair ends up with
/// two calls, each carrying one direction's messages: correct, just not minimal.
/// </summary>
internal sealed class PeerStreams
{
    private readonly RankIdentity _identity;
    private readonly Lock _lock = new(); // over the arrays below and the choice of a link
    private readonly Task<PeerLink>?[] _links;
    private readonly PeerLink?[] _openLinks; // the links once open, read without the lock on every send
    private readonly ServedStream?[] _offered; // a call the peer opened, not (yet) chosen, still being read
    private readonly RpcChannel?[] _channels;
    private Uri[] _endpoints = [];
    private RpcSecurity[] _security = [];

    public PeerStreams(RankIdentity identity, MatchingEngine engine)
    {
        _identity = identity;
        _links = new Task<PeerLink>?[identity.Size];
        _openLinks = new PeerLink?[identity.Size];
        _offered = new ServedStream?[identity.Size];
        _channels = new RpcChannel?[identity.Size];
        Inbound = new InboundStreams(identity, engine, this);
    }

    /// <summary>The receiving half, which serves this rank's endpoint and reads the responses of dialed calls.</summary>
    public InboundStreams Inbound { get; }

    /// <summary>
    /// Where each rank's endpoint listens and how to dial it (h2c, or TLS to its pinned certificate); known once the
    /// master has answered, before the first send.
    /// </summary>
    public void UseEndpoints(Uri[] endpoints, RpcSecurity[] security) => (_endpoints, _security) = (endpoints, security);

    /// <summary>The link carrying this rank's messages to <paramref name="peer"/>, chosen (and dialed if need be) on first use.</summary>
    /// <exception cref="RpcException">The peer could not be dialed.</exception>
    public PeerLink LinkTo(int peer) => Volatile.Read(ref _openLinks[peer]) ?? ChooseAsync(peer).GetAwaiter().GetResult();

    /// <summary>Where <paramref name="peer"/>'s endpoint listens.</summary>
    public Uri EndpointOf(int peer) => _endpoints[peer];

    /// <summary>A call the peer opened: this rank may send its own messages back on it while it is open.</summary>
    public void Offer(ServedStream served)
    {
        // A dial that failed carried nothing, so the peer's call may still take its place.
        lock (_lock)
            if (_links[served.Peer] is null or { IsFaulted: true }) _offered[served.Peer] = served;
    }

    /// <summary>The peer ended its requests (or the call broke): the call is no longer on offer.</summary>
    /// <returns>Whether this rank chose the call for its messages, so its handler must wait for them.</returns>
    public bool Withdraw(ServedStream served)
    {
        lock (_lock)
        {
            if (_offered[served.Peer] == served) _offered[served.Peer] = null;
            return served.Link is not null;
        }
    }

    /// <summary>Writes what every link has queued (briefly), then closes the streams this rank sends on.</summary>
    public async ValueTask DisposeAsync()
    {
        List<PeerLink> links;
        lock (_lock) links = [.. _links.Where(link => link is { IsCompletedSuccessfully: true }).Select(link => link!.Result)];
        // At once: each dialed call waits (briefly) for its peer to end the responses.
        await Task.WhenAll(links.Select(link => link.DisposeAsync().AsTask())).ConfigureAwait(false);
        foreach (var channel in _channels) channel?.Dispose();
    }

    private async Task<PeerLink> ChooseAsync(int peer)
    {
        Task<PeerLink> opening;
        lock (_lock)
        {
            if (_links[peer] is { IsFaulted: false } existing) opening = existing;
            else if (_offered[peer] is { } served)
            {
                _offered[peer] = null;
                opening = _links[peer] = Task.FromResult(new PeerLink(served));
            }
            else
            {
                var channel = _channels[peer] ??= new RpcChannel(_endpoints[peer], security: _security[peer]);
                opening = _links[peer] = DialAsync(channel, peer);
            }
        }
        var link = await opening.ConfigureAwait(false);
        Volatile.Write(ref _openLinks[peer], link);
        return link;
    }

    private async Task<PeerLink> DialAsync(RpcChannel channel, int peer)
    {
        var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect).ConfigureAwait(false);
        try
        {
            await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = _identity.JobId, JobToken = _identity.JobToken, SourceWorldRank = _identity.Rank } },
                CancellationToken.None).ConfigureAwait(false);
        }
        catch
        {
            await call.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        var dialed = new DialedStream(call, peer);
        var link = new PeerLink(dialed);
        dialed.Receiving = Task.Run(() => Inbound.ReceiveAsync(dialed));
        return link;
    }
}
