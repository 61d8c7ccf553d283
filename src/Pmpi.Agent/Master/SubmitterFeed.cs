using System.Threading.Channels;
using Grpc.Core;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Master;

/// <summary>
/// What a job tells its submitter, in order, on the submission's response stream: a bounded queue, so while the
/// submitter reads slowly the job's publishers wait (and the agents' launch streams are not read either); once the
/// submitter is gone, events are dropped.
/// </summary>
internal sealed class SubmitterFeed
{
    /// <summary>Events queued for the submitter.</summary>
    private const int QueueLength = 64;

    private readonly Channel<JobEvent> _events = Channel.CreateBounded<JobEvent>(new BoundedChannelOptions(QueueLength) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
    private CancellationToken _submitterGone;

    /// <summary>Writes the queued events to <paramref name="responses"/> until <see cref="Complete"/>, or the submitter goes (<paramref name="submitterGone"/>).</summary>
    public async Task PumpAsync(IServerStreamWriter<JobEvent> responses, CancellationToken submitterGone)
    {
        _submitterGone = submitterGone;
        try
        {
            await foreach (var item in _events.Reader.ReadAllAsync(submitterGone).ConfigureAwait(false))
                await responses.WriteAsync(item, submitterGone).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException or IOException or InvalidOperationException)
        {
            // The submitter is gone (a write after its call ended is an InvalidOperationException); the job is being
            // aborted because of it.
        }
    }

    /// <summary>Queues an event for the submitter, waiting while it reads slowly; dropped once the submitter is gone.</summary>
    public async ValueTask PublishAsync(JobEvent item)
    {
        try
        {
            await _events.Writer.WriteAsync(item, _submitterGone).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or ChannelClosedException)
        {
            // Nobody reads any more; the job is being aborted because of it.
        }
    }

    /// <summary>Ends the feed after the events queued so far.</summary>
    public void Complete() => _events.Writer.TryComplete();
}
