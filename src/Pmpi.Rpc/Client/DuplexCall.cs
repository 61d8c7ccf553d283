using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using System.Net;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Client;

/// <summary>
/// A call in progress (one HTTP/2 stream): write requests, read responses, then check the status. Requests and
/// responses flow at the same time. Disposing cancels the call if it has not finished.
/// </summary>
public sealed class DuplexCall<TRequest, TResponse> : IAsyncDisposable
    where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
{
    /// <summary>How long a failed write waits for the status that explains it.</summary>
    private static readonly TimeSpan StatusWait = TimeSpan.FromSeconds(1);

    private readonly string _path;
    private readonly StreamingContent _body;
    private readonly Task<HttpResponseMessage> _response;
    private readonly CancellationTokenSource _lifetime;
    private readonly CancellationTokenSource? _deadline;
    private readonly RpcOptions _options;
    private MessageReader<TResponse>? _responses;
    private HttpResponseMessage? _headers;
    private bool _ended;
    private int _disposed;

    internal DuplexCall(string path, Stream requestStream, StreamingContent body, Task<HttpResponseMessage> response,
        CancellationTokenSource lifetime, CancellationTokenSource? deadline, RpcOptions options)
    {
        _path = path;
        _body = body;
        _response = response;
        _lifetime = lifetime;
        _deadline = deadline;
        _options = options;
        // A larger minimum segment keeps a multi-megabyte message from being written in 4 KB pieces.
        var requestPipe = PipeWriter.Create(requestStream, new StreamPipeWriterOptions(minimumBufferSize: 16 * 1024, leaveOpen: true));
        Requests = new MessageWriter<TRequest>(requestPipe, options, TranslateWriteFailure);
        Responses = new ResponseReader(this);
    }

    /// <summary>Where requests go; each write is flushed. Safe to use from several threads.</summary>
    public MessageWriter<TRequest> Requests { get; }

    /// <summary>The responses, in order; null from ReadAsync at the end. A failed status throws from there.</summary>
    public ResponseReader Responses { get; }

    /// <summary>Cancelled when the call's deadline passes, the token given at its start is cancelled, or it is disposed.</summary>
    public CancellationToken CancellationToken => _lifetime.Token;

    /// <summary>Ends the request stream (half-close): the server's reader sees the end after the last request.</summary>
    public async Task CompleteRequestsAsync(CancellationToken cancellationToken = default)
    {
        await Requests.CompleteAsync(cancellationToken).ConfigureAwait(false);
        // Returning from SerializeToStreamAsync is what makes SocketsHttpHandler send END_STREAM.
        _body.Complete();
    }

    /// <summary>Throws the call's status if it is not OK. The status is known once the responses ended.</summary>
    /// <exception cref="RpcException">The call ended with a non-OK status, or failed locally.</exception>
    public async Task EnsureSuccessAsync(CancellationToken cancellationToken)
    {
        var response = await HeadersAsync(cancellationToken).ConfigureAwait(false);
        var (code, detail) = Status(response);
        if (code != StatusCode.OK) throw new RpcException(new Status(code, detail));
    }

    /// <summary>Cancels the call if it has not ended (the server sees the stream reset) and releases it.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        _body.Complete();
        await _lifetime.CancelAsync().ConfigureAwait(false);
        try
        {
            (await _response.ConfigureAwait(false)).Dispose();
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException or HttpRequestException or IOException)
        {
            // The call failed or was cancelled; its error went to whoever read it.
        }
        _lifetime.Dispose();
        _deadline?.Dispose();
    }

    private async ValueTask<HttpResponseMessage> HeadersAsync(CancellationToken cancellationToken)
    {
        if (_headers is not null) return _headers;
        HttpResponseMessage response;
        try
        {
            response = await _response.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (Translate(e, cancellationToken) is { } error)
        {
            throw error;
        }
        if (response.Content.Headers.ContentType?.MediaType is not { } type || !type.StartsWith("application/grpc", StringComparison.OrdinalIgnoreCase))
        {
            // Not a gRPC answer (e.g. 404 from a plain web server, 415): map the HTTP status (http-grpc-status-mapping.md).
            throw new RpcException(new Status(FromHttpStatus(response.StatusCode),
                $"{_path}: HTTP {(int)response.StatusCode} {response.ReasonPhrase} with content-type '{response.Content.Headers.ContentType}'."));
        }
        return _headers = response;
    }

    /// <summary>
    /// What a failure of the underlying HTTP call means for the caller: null to let it through (the caller's own
    /// cancellation), else an <see cref="RpcException"/> with the status the call ended with.
    /// </summary>
    private RpcException? Translate(Exception e, CancellationToken callerToken)
    {
        if (e is RpcException rpc) return rpc;
        if (callerToken.IsCancellationRequested && e is OperationCanceledException) return null;
        if (_lifetime.IsCancellationRequested)
        {
            // The deadline has its own source, so a deadline is told apart from a disposal exactly (not by the clock).
            return _deadline is { IsCancellationRequested: true }
                ? new RpcException(new Status(StatusCode.DeadlineExceeded, $"{_path}: the deadline passed.", e))
                : new RpcException(new Status(StatusCode.Cancelled, $"{_path}: the call was cancelled.", e));
        }
        // SocketsHttpHandler disposes the request stream of a call the server ended before reading to its end.
        return e is IOException or HttpRequestException or OperationCanceledException or ObjectDisposedException
            ? new RpcException(new Status(StatusCode.Unavailable, $"{_path}: the connection broke: {e.Message}", e))
            : null;
    }

    /// <summary>
    /// What a failed request write means: the caller's cancellation, the deadline or a disposal as for reads; else
    /// the server may have ended the call without reading its requests (an unknown method's trailers-only status,
    /// say), and then its status, which arrives with its response, is the reason.
    /// </summary>
    private async ValueTask<RpcException?> TranslateWriteFailure(Exception e, CancellationToken callerToken)
    {
        var translated = Translate(e, callerToken);
        if (translated is null || _lifetime.IsCancellationRequested) return translated;
        try
        {
            var response = await _response.WaitAsync(StatusWait, CancellationToken.None).ConfigureAwait(false);
            var (code, detail) = Status(response);
            if (Header(response.Headers, "grpc-status") is not null && code != StatusCode.OK) return new RpcException(new Status(code, detail, e));
        }
        catch (Exception failure) when (failure is TimeoutException or RpcException or HttpRequestException or OperationCanceledException)
        {
            // No status came: the connection itself broke.
        }
        return translated;
    }

    private static StatusCode FromHttpStatus(HttpStatusCode status) => status switch
    {
        HttpStatusCode.BadRequest => StatusCode.Internal,
        HttpStatusCode.Unauthorized => StatusCode.Unauthenticated,
        HttpStatusCode.Forbidden => StatusCode.PermissionDenied,
        HttpStatusCode.NotFound => StatusCode.Unimplemented,
        HttpStatusCode.TooManyRequests or HttpStatusCode.BadGateway or HttpStatusCode.ServiceUnavailable
            or HttpStatusCode.GatewayTimeout => StatusCode.Unavailable,
        _ => StatusCode.Unknown,
    };

    private static (StatusCode Code, string Detail) Status(HttpResponseMessage response)
    {
        // Trailers-only responses carry the status in the headers; others in the trailers, which SocketsHttpHandler
        // fills only once the body was read to its end.
        string? code = Header(response.Headers, "grpc-status") ?? Header(response.TrailingHeaders, "grpc-status");
        string? message = Header(response.Headers, "grpc-message") ?? Header(response.TrailingHeaders, "grpc-message");
        if (code is null) return (StatusCode.Internal, "The response ended without a grpc-status.");
        if (!int.TryParse(code, NumberStyles.None, CultureInfo.InvariantCulture, out int value))
            return (StatusCode.Internal, $"The response carried an invalid grpc-status '{code}'.");
        return ((StatusCode)value, message is null ? "" : GrpcMessage.Decode(message));
    }

    private static string? Header(HttpHeaders headers, string name)
    {
        if (!headers.TryGetValues(name, out var values)) return null;
        foreach (var value in values) return value;
        return null;
    }

    /// <summary>Reads the call's responses; one reader at a time.</summary>
    public sealed class ResponseReader
    {
        private readonly DuplexCall<TRequest, TResponse> _call;

        internal ResponseReader(DuplexCall<TRequest, TResponse> call) => _call = call;

        /// <summary>The next response, or null when the call ended with OK.</summary>
        /// <exception cref="RpcException">
        /// The call ended with another status (DEADLINE_EXCEEDED when its deadline passed, CANCELLED when it was
        /// disposed), or the transport failed (UNAVAILABLE). The caller's own cancellation throws OperationCanceledException.
        /// </exception>
        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        public async ValueTask<TResponse?> ReadAsync(CancellationToken cancellationToken)
        {
            var call = _call;
            if (call._ended) return default;
            var responses = call._responses ?? await StartReadingAsync(cancellationToken).ConfigureAwait(false);
            if (responses is null) return default;
            TResponse? message;
            try
            {
                message = await responses.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (call.Translate(e, cancellationToken) is { } error && !ReferenceEquals(error, e))
            {
                throw error;
            }
            if (message is null)
            {
                call._ended = true;
                await call.EnsureSuccessAsync(cancellationToken).ConfigureAwait(false);
            }
            return message;
        }

        private async ValueTask<MessageReader<TResponse>?> StartReadingAsync(CancellationToken cancellationToken)
        {
            var call = _call;
            var response = await call.HeadersAsync(cancellationToken).ConfigureAwait(false);
            if (Header(response.Headers, "grpc-status") is not null)
            {
                // Trailers-only: no messages, just the status.
                call._ended = true;
                await call.EnsureSuccessAsync(cancellationToken).ConfigureAwait(false);
                return null;
            }
            Stream stream;
            try
            {
                stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (call.Translate(e, cancellationToken) is { } error)
            {
                throw error;
            }
            // 64 KB reads: a stream of large messages is read in few calls instead of one per 4 KB.
            var pipe = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 64 * 1024, minimumReadSize: 16 * 1024));
            return call._responses = new MessageReader<TResponse>(pipe, call._options);
        }
    }
}
