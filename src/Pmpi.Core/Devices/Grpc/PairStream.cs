using Grpc.Core;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Streams;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// One RankTransport.Connect call between this rank and a peer, seen from either end: the peer's frames arrive on
/// one direction (the requests of a served call, the responses of a dialed one) and this rank's frames leave on the
/// other. Both ranks' messages and each one's acknowledgements of the other's synchronous sends can share it.
/// </summary>
internal abstract class PairStream
{
    private volatile bool _chosen;

    protected PairStream(int peer, GrpcStream stream)
    {
        Peer = peer;
        Stream = stream;
        Writer = new StreamSender(this);
    }

    /// <summary>The world rank at the other end.</summary>
    public int Peer { get; }

    /// <summary>The call underneath: this rank writes on it, its connection's thread reads the peer's frames.</summary>
    public GrpcStream Stream { get; }

    /// <summary>What writes this rank's frames on the call: acknowledgements always, messages once the call is <see cref="Chosen"/>.</summary>
    public StreamSender Writer { get; }

    /// <summary>Whether this rank chose the call for its messages to the peer (<see cref="PeerStreams"/>).</summary>
    public bool Chosen
    {
        get => _chosen;
        set => _chosen = value;
    }

    /// <summary>Which way the call goes, for errors: the route this rank dialed, or the peer's call.</summary>
    public abstract string Way { get; }

    /// <summary>Ends this rank's use of the stream, once its writer has written everything.</summary>
    public abstract ValueTask CloseAsync();
}

/// <summary>
/// A call the peer opened to this rank's endpoint. Its responses end (with an OK status) once the peer ended its
/// requests and this rank, if it chose the call for its messages, has finished sending; or once this rank closes,
/// its program done: the peer then sees the call end cleanly, where a connection closed under an open call would
/// reach it as a break (through the gateways, a reset that aborts a rank still finishing its part).
/// </summary>
internal sealed class ServedStream(int peer, GrpcStream stream) : PairStream(peer, stream)
{
    private static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(5);
    private readonly TaskCompletionSource _requestsEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _finished;

    public override string Way => $"on the call rank {Peer} opened";

    /// <summary>The peer's requests ended, or broke: <paramref name="failure"/> then fails the call at once.</summary>
    public void PeerEnded(bool sendingHere, RpcException? failure)
    {
        _requestsEnded.TrySetResult();
        if (failure is not null || !sendingHere) Finish(failure);
    }

    public override async ValueTask CloseAsync()
    {
        Finish(null);
        // The peer ends its requests as it closes, which at the end of a job is at once (every rank has entered
        // Finalize's barrier). Waiting (briefly) for that lets both halves of the call end before the connection
        // does: a gateway relaying a half-open call whose connection closes may turn the end into a reset.
        try
        {
            await _requestsEnded.Task.WaitAsync(CloseWait).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // The peer is slow or gone; its side learns of the end from the connection.
        }
    }

    private void Finish(RpcException? failure)
    {
        if (Interlocked.Exchange(ref _finished, 1) != 0) return;
        try
        {
            Stream.Complete(failure);
        }
        catch (RpcException)
        {
            // The call broke or the peer went away; there is nothing left to end.
        }
    }
}

/// <summary>A call this rank opened along its route to the peer (the peer's endpoint, or this rank's gateway).</summary>
internal sealed class DialedStream(GrpcStream stream, Route route) : PairStream(route.To.Rank, stream)
{
    private static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(5);
    private readonly TaskCompletionSource _receiving = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public override string Way => route.ToString();

    /// <summary>The peer ended its responses (or the call broke): nothing more arrives here.</summary>
    public void PeerEnded() => _receiving.TrySetResult();

    public override async ValueTask CloseAsync()
    {
        try
        {
            Stream.Complete();
            // The peer ends its responses once it has seen the end of the requests and, if it sends here too, has
            // finished sending; waiting (briefly) lets the half-close reach it before the connection closes.
            await _receiving.Task.WaitAsync(CloseWait).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or RpcException)
        {
            // Closing at the end of the job; the peer may be gone already.
        }
        Stream.Dispose();
    }
}
