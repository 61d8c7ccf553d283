using System.Net;
using System.Net.Http.Headers;
using System.IO.Pipelines;
using Google.Protobuf;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Client;

/// <summary>
/// Calls gRPC methods on one server over cleartext HTTP/2, reusing connections (SocketsHttpHandler). Each call is
/// one HTTP/2 stream; a streaming request body makes a call full duplex.
/// </summary>
public sealed class RpcChannel : IDisposable
{
    private readonly HttpMessageInvoker _http;
    private readonly RpcOptions _options;

    /// <summary>A channel to <paramref name="address"/> (http://host:port).</summary>
    public RpcChannel(Uri address, RpcOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        Address = address;
        _options = options ?? RpcOptions.Default;
        _http = new HttpMessageInvoker(new SocketsHttpHandler
        {
            UseProxy = false,
            EnableMultipleHttp2Connections = true,
            InitialHttp2StreamWindowSize = 16 * 1024 * 1024,
            KeepAlivePingDelay = TimeSpan.FromSeconds(30),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(60),
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
        });
    }

    /// <summary>The server this channel calls.</summary>
    public Uri Address { get; }

    /// <summary>Calls a unary method.</summary>
    public async Task<TResponse> UnaryAsync<TRequest, TResponse>(string path, TRequest request, TimeSpan? deadline = null, CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        await using var call = await StartAsync<TRequest, TResponse>(path, deadline, cancellationToken).ConfigureAwait(false);
        await call.Requests.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        await call.CompleteRequestsAsync().ConfigureAwait(false);
        var response = await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false)
            ?? throw new RpcException(StatusCode.Internal, $"{path} returned OK without a response message.");
        // Reading to the end is what fills the trailers, and with them the status.
        if (await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false) is not null)
            throw new RpcException(StatusCode.Internal, $"{path} returned more than one response to a unary call.");
        return response;
    }

    /// <summary>Calls a server-streaming method; the responses end when the call does, and a failed status throws.</summary>
    public async IAsyncEnumerable<TResponse> ServerStreamingAsync<TRequest, TResponse>(string path, TRequest request, TimeSpan? deadline = null,
        [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        await using var call = await StartAsync<TRequest, TResponse>(path, deadline, cancellationToken).ConfigureAwait(false);
        await call.Requests.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        await call.CompleteRequestsAsync().ConfigureAwait(false);
        while (await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false) is { } response) yield return response;
    }

    /// <summary>Starts a call whose requests and responses both stream (also the basis of the other forms).</summary>
    public async Task<DuplexCall<TRequest, TResponse>> StartAsync<TRequest, TResponse>(string path, TimeSpan? deadline = null, CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        var body = new StreamingContent();
        var request = new HttpRequestMessage(HttpMethod.Post, new Uri(Address, path))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = body,
        };
        request.Headers.TE.Add(new TransferCodingWithQualityHeaderValue("trailers"));
        if (deadline is { } d) request.Headers.Add("grpc-timeout", GrpcTimeout.Format(d));
        var lifetime = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (deadline is { } limit) lifetime.CancelAfter(limit);

        // A grpcio server sends its headers only with its first response, so the request body must already be open
        // for writing while the response headers are awaited.
        var responseTask = SendAsync(request, path, lifetime.Token);
        Stream requestStream;
        try
        {
            requestStream = await body.Stream.WaitAsync(lifetime.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException e)
        {
            lifetime.Dispose();
            throw new RpcException(StatusCode.DeadlineExceeded, $"{path} on {Address} did not start in time.", e);
        }
        catch (Exception)
        {
            lifetime.Dispose();
            await responseTask.ConfigureAwait(false); // throws the transport error with its status
            throw;
        }
        return new DuplexCall<TRequest, TResponse>(path, requestStream, body, responseTask, lifetime, _options);
    }

    private async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, string path, CancellationToken cancellationToken)
    {
        try
        {
            return await _http.SendAsync(request, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new RpcException(StatusCode.Unavailable, $"{path} on {Address}: {e.Message}", e);
        }
    }

    /// <inheritdoc/>
    public void Dispose() => _http.Dispose();

    /// <summary>A request body written by the caller while the call runs.</summary>
    internal sealed class StreamingContent : HttpContent
    {
        private readonly TaskCompletionSource<Stream> _stream = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public StreamingContent() => Headers.ContentType = new MediaTypeHeaderValue("application/grpc");

        public Task<Stream> Stream => _stream.Task;

        public void Complete() => _completed.TrySetResult();

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
        {
            _stream.TrySetResult(stream);
            await _completed.Task.ConfigureAwait(false);
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
}
