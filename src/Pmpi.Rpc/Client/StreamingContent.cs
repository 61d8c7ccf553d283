using System.Net;
using System.Net.Http.Headers;

namespace Pmpi.Rpc.Client;

/// <summary>A request body written by the caller while the call runs: a call's messages, or a tunnel's bytes.</summary>
internal sealed class StreamingContent : HttpContent
{
    private readonly TaskCompletionSource<Stream> _stream = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <param name="contentType">application/grpc for a call's messages; another type for bytes that are not (a tunnel's).</param>
    public StreamingContent(string contentType = "application/grpc") => Headers.ContentType = new MediaTypeHeaderValue(contentType);

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
