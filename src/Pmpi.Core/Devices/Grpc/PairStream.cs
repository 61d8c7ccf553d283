using Pmpi.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// One RankTransport.Connect call between this rank and a peer, seen from either end: the peer's frames arrive on
/// one direction (the requests of a served call, the responses of a dialed one) and this rank's frames leave on the
/// other. Both ranks' messages and each one's acknowledgements of the other's synchronous sends can share it.
/// </summary>
internal abstract class PairStream(int peer, MessageWriter<Frame> outgoing, CancellationToken cancellationToken)
{
    private StreamSender? _sender;

    /// <summary>The world rank at the other end.</summary>
    public int Peer => peer;

    /// <summary>Where this rank's frames go: a dialed call's requests or a served call's responses.</summary>
    public MessageWriter<Frame> Outgoing => outgoing;

    /// <summary>Cancelled when the call is over.</summary>
    public CancellationToken CancellationToken => cancellationToken;

    /// <summary>What sends this rank's messages to the peer, once it chose this stream for them; null while it only receives here.</summary>
    public StreamSender? Sender
    {
        get => Volatile.Read(ref _sender);
        set => Volatile.Write(ref _sender, value);
    }

    /// <summary>Which way the call goes, for errors: the route this rank dialed, or the peer's call.</summary>
    public abstract string Way { get; }

    /// <summary>Ends this rank's use of the stream, once its sender has written everything.</summary>
    public abstract ValueTask CloseAsync();
}

/// <summary>A call the peer opened to this rank's endpoint; its handler lives until this rank has finished sending here.</summary>
internal sealed class ServedStream(int peer, MessageWriter<Frame> responses, CancellationToken cancellationToken)
    : PairStream(peer, responses, cancellationToken)
{
    private readonly TaskCompletionSource _sendingDone = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes when this rank will write nothing more on the responses.</summary>
    public Task SendingDone => _sendingDone.Task;

    public override string Way => $"on the call rank {Peer} opened";

    public override ValueTask CloseAsync()
    {
        _sendingDone.TrySetResult();
        return ValueTask.CompletedTask;
    }
}

/// <summary>
/// A call this rank opened along its route to the peer (the peer's endpoint, or this rank's gateway); a reader task
/// takes the peer's frames off its responses.
/// </summary>
internal sealed class DialedStream(DuplexCall<Frame, Frame> call, Route route) : PairStream(route.To.Rank, call.Requests, call.CancellationToken)
{
    private static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(5);

    /// <summary>The call underneath.</summary>
    public DuplexCall<Frame, Frame> Call => call;

    public override string Way => route.ToString();

    /// <summary>Reads the responses until the peer ends them; set once, right after the stream is made.</summary>
    public Task Receiving { get; set; } = Task.CompletedTask;

    public override async ValueTask CloseAsync()
    {
        try
        {
            await call.CompleteRequestsAsync().ConfigureAwait(false);
            // The peer ends its responses once it has seen the end of the requests and, if it sends here too, has
            // finished sending; waiting (briefly) lets the half-close reach it before the call is torn down.
            await Receiving.WaitAsync(CloseWait).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or IOException or RpcException or OperationCanceledException)
        {
            // Closing at the end of the job; the peer may be gone already.
        }
        await call.DisposeAsync().ConfigureAwait(false);
    }
}
