using System.Net;
using System.Net.Http.Headers;

namespace Pmpi.Gateway.Internal;

/// <summary>A request body written while its call runs: the bytes of a tunnel (<see cref="TunnelDialer"/>).</summary>
internal sealed class StreamingContent : HttpContent
{
    private readonly TaskCompletionSource<Stream> _stream = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public StreamingContent(string contentType) => Headers.ContentType = new MediaTypeHeaderValue(contentType);

    /// <summary>The HTTP/2 request stream, once SocketsHttpHandler asks for the body.</summary>
    public Task<Stream> Stream => _stream.Task;

    /// <summary>Ends the body: SocketsHttpHandler then sends END_STREAM.</summary>
    public void Complete() => _completed.TrySetResult();

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
    {
        _stream.TrySetResult(stream);
        await _completed.Task.ConfigureAwait(false);
    }

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        // The body stays open until Complete; a cancelled call ends it at once rather than leaving it waiting.
        await using var registration = cancellationToken.Register(static state => ((TaskCompletionSource)state!).TrySetResult(), _completed);
        await SerializeToStreamAsync(stream, context).ConfigureAwait(false);
    }

    protected override bool TryComputeLength(out long length)
    {
        length = -1;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        _completed.TrySetResult();
        _stream.TrySetCanceled();
        base.Dispose(disposing);
    }
}
