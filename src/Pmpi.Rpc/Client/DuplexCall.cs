using System.Globalization;
using System.IO.Pipelines;
using System.Net.Http.Headers;
using Google.Protobuf;

namespace Pmpi.Rpc.Client;

/// <summary>A call in progress: write requests, read responses, then check the status. Disposing cancels it if unfinished.</summary>
public sealed class DuplexCall<TRequest, TResponse> : IAsyncDisposable
    where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
{
    private readonly string _path;
    private readonly PipeWriter _requestPipe;
    private readonly RpcChannel.StreamingContent _body;
    private readonly Task<HttpResponseMessage> _response;
    private readonly CancellationTokenSource _lifetime;
    private readonly RpcOptions _options;
    private MessageReader<TResponse>? _responses;
    private HttpResponseMessage? _completedResponse;

    internal DuplexCall(string path, Stream requestStream, RpcChannel.StreamingContent body, Task<HttpResponseMessage> response,
        CancellationTokenSource lifetime, RpcOptions options)
    {
        _path = path;
        _requestPipe = PipeWriter.Create(requestStream, new StreamPipeWriterOptions(leaveOpen: true));
        _body = body;
        _response = response;
        _lifetime = lifetime;
        _options = options;
        Requests = new MessageWriter<TRequest>(_requestPipe);
        Responses = new ResponseReader(this);
    }

    /// <summary>Where requests go; each write is flushed.</summary>
    public MessageWriter<TRequest> Requests { get; }

    /// <summary>The responses, in order; null from ReadAsync at the end. A failed status throws from there.</summary>
    public ResponseReader Responses { get; }

    /// <summary>Cancelled when the call's deadline passes or it is disposed.</summary>
    public CancellationToken CancellationToken => _lifetime.Token;

    /// <summary>Ends the request stream (half-close).</summary>
    public async Task CompleteRequestsAsync()
    {
        await _requestPipe.CompleteAsync().ConfigureAwait(false);
        _body.Complete();
    }

    /// <summary>Throws the call's status if it is not OK; call after the responses ended.</summary>
    public async Task EnsureSuccessAsync(CancellationToken cancellationToken)
    {
        var response = await HeadersAsync(cancellationToken).ConfigureAwait(false);
        var (code, detail) = Status(response);
        if (code != StatusCode.OK) throw new RpcException(code, detail);
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        _body.Complete();
        await _lifetime.CancelAsync().ConfigureAwait(false);
        try
        {
            (await _response.ConfigureAwait(false)).Dispose();
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException or HttpRequestException)
        {
            // The call failed or was cancelled; its error went to whoever read it.
        }
        _lifetime.Dispose();
    }

    private async Task<HttpResponseMessage> HeadersAsync(CancellationToken cancellationToken)
    {
        if (_completedResponse is not null) return _completedResponse;
        HttpResponseMessage response;
        try
        {
            response = await _response.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException e) when (_lifetime.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new RpcException(StatusCode.DeadlineExceeded, $"{_path}: the deadline passed.", e);
        }
        if (response.Content.Headers.ContentType?.MediaType is not { } type || !type.StartsWith("application/grpc", StringComparison.Ordinal))
        {
            // Not a gRPC answer (e.g. 404 from a plain web server, 415): say what came back.
            throw new RpcException(StatusCode.Unknown, $"{_path}: HTTP {(int)response.StatusCode} {response.ReasonPhrase} with content-type '{response.Content.Headers.ContentType}'.");
        }
        return _completedResponse = response;
    }

    private static (StatusCode, string) Status(HttpResponseMessage response)
    {
        // Trailers-only responses carry the status in the headers; others in the trailers after the body.
        string? code = Header(response.Headers, "grpc-status") ?? Header(response.TrailingHeaders, "grpc-status");
        string? message = Header(response.Headers, "grpc-message") ?? Header(response.TrailingHeaders, "grpc-message");
        if (code is null) return (StatusCode.Internal, "The response ended without a grpc-status.");
        return ((StatusCode)int.Parse(code, CultureInfo.InvariantCulture), message is null ? "" : Uri.UnescapeDataString(message));
    }

    private static string? Header(HttpHeaders headers, string name) => headers.TryGetValues(name, out var values) ? values.FirstOrDefault() : null;

    /// <summary>Reads the call's responses.</summary>
    public sealed class ResponseReader
    {
        private readonly DuplexCall<TRequest, TResponse> _call;

        internal ResponseReader(DuplexCall<TRequest, TResponse> call) => _call = call;

        /// <summary>The next response, or null when the call ended with OK.</summary>
        /// <exception cref="RpcException">The call ended with another status, or the transport failed.</exception>
        public async ValueTask<TResponse?> ReadAsync(CancellationToken cancellationToken)
        {
            var response = await _call.HeadersAsync(cancellationToken).ConfigureAwait(false);
            if (_call._responses is null)
            {
                var (code, detail) = Status(response);
                if (Header(response.Headers, "grpc-status") is not null)
                {
                    if (code != StatusCode.OK) throw new RpcException(code, detail);
                    return default;
                }
                var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
                _call._responses = new MessageReader<TResponse>(PipeReader.Create(stream), _call._options);
            }
            TResponse? message;
            try
            {
                message = await _call._responses.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (IOException e)
            {
                throw new RpcException(StatusCode.Unavailable, $"{_call._path}: the connection broke: {e.Message}", e);
            }
            catch (HttpRequestException e)
            {
                throw new RpcException(StatusCode.Unavailable, $"{_call._path}: the connection broke: {e.Message}", e);
            }
            if (message is null) await _call.EnsureSuccessAsync(cancellationToken).ConfigureAwait(false);
            return message;
        }
    }
}
