using System.Net;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Client;

/// <summary>
/// Calls gRPC methods on one server over HTTP/2 (TLS or cleartext, as its <see cref="RpcSecurity"/> says), reusing
/// connections (SocketsHttpHandler). Each call is one HTTP/2 stream; a streaming request body makes every call full
/// duplex. Thread-safe; keep one per server.
/// </summary>
public sealed class RpcChannel : IDisposable
{
    private readonly HttpMessageInvoker _http;
    private readonly RpcOptions _options;
    private readonly RpcSecurity _security;
    private readonly KeyValuePair<string, string>[] _metadata;

    /// <summary>A channel to <paramref name="address"/> (https://host:port, or http://host:port for h2c).</summary>
    /// <param name="address">The server's base address; its scheme must be the one <paramref name="security"/> speaks.</param>
    /// <param name="options">Message size limits and pings; <see cref="RpcOptions.Default"/> when null.</param>
    /// <param name="security">How the server is checked and this caller proven; <see cref="RpcSecurity.Insecure"/> (h2c, no credential) when null.</param>
    /// <param name="metadata">Request headers every call carries: the route a gateway relays them by (<see cref="ControlRoute"/>) when the server is one.</param>
    /// <exception cref="ArgumentException">The address's scheme is not the one <paramref name="security"/> speaks.</exception>
    public RpcChannel(Uri address, RpcOptions? options = null, RpcSecurity? security = null, IEnumerable<KeyValuePair<string, string>>? metadata = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        _metadata = metadata?.ToArray() ?? [];
        _security = security ?? RpcSecurity.Insecure;
        _security.CheckAddress(address);
        Address = address;
        _options = options ?? RpcOptions.Default;
        var handler = RpcChannels.Handler(_options, _security);
        _http = new HttpMessageInvoker(handler);
    }

    /// <summary>The server this channel calls.</summary>
    public Uri Address { get; }

    /// <summary>Calls a unary method.</summary>
    /// <param name="path">The method's path, e.g. "/pmpi.v1.Agent/GetNodeInfo" (see <see cref="ServicePaths"/>).</param>
    /// <param name="request">The request.</param>
    /// <param name="deadline">How long the call may take (sent as grpc-timeout); none when null.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <exception cref="RpcException">The call ended with a non-OK status.</exception>
    public async Task<TResponse> UnaryAsync<TRequest, TResponse>(string path, TRequest request, TimeSpan? deadline = null, CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        await using var call = await StartAsync<TRequest, TResponse>(path, deadline, cancellationToken).ConfigureAwait(false);
        await call.Requests.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        await call.CompleteRequestsAsync(cancellationToken).ConfigureAwait(false);
        var response = await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false)
            ?? throw new RpcException(new Status(StatusCode.Internal, $"{path} returned OK without a response message."));
        // Reading to the end is what fills the trailers, and with them the status.
        if (await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false) is not null)
            throw new RpcException(new Status(StatusCode.Internal, $"{path} returned more than one response to a unary call."));
        return response;
    }

    /// <summary>Calls a server-streaming method; the responses end when the call does, and a failed status throws.</summary>
    /// <param name="path">The method's path.</param>
    /// <param name="request">The request.</param>
    /// <param name="deadline">How long the whole call may take; none when null.</param>
    /// <param name="cancellationToken">Cancels the call (also given by WithCancellation).</param>
    public async IAsyncEnumerable<TResponse> ServerStreamingAsync<TRequest, TResponse>(string path, TRequest request, TimeSpan? deadline = null,
        [EnumeratorCancellation] CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        await using var call = await StartAsync<TRequest, TResponse>(path, deadline, cancellationToken).ConfigureAwait(false);
        await call.Requests.WriteAsync(request, cancellationToken).ConfigureAwait(false);
        await call.CompleteRequestsAsync(cancellationToken).ConfigureAwait(false);
        while (await call.Responses.ReadAsync(cancellationToken).ConfigureAwait(false) is { } response) yield return response;
    }

    /// <summary>
    /// Starts a call whose requests and responses both stream (also the basis of the other forms). It returns once
    /// requests can be written, without waiting for the response headers: a grpcio server sends those only with its
    /// first response.
    /// </summary>
    /// <param name="path">The method's path, e.g. <see cref="ServicePaths.Connect"/>.</param>
    /// <param name="deadline">How long the whole call may take (sent as grpc-timeout); none when null.</param>
    /// <param name="cancellationToken">Cancels the call for its whole life, not only its start.</param>
    /// <exception cref="RpcException">UNAVAILABLE when the server cannot be reached; DEADLINE_EXCEEDED when the deadline passed first.</exception>
    public Task<DuplexCall<TRequest, TResponse>> StartAsync<TRequest, TResponse>(string path, TimeSpan? deadline = null, CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new() =>
        StartAsync<TRequest, TResponse>(path, [], deadline, cancellationToken);

    /// <summary>Starts a call as <see cref="StartAsync{TRequest, TResponse}(string, TimeSpan?, CancellationToken)"/> does, with request metadata.</summary>
    /// <param name="path">The method's path.</param>
    /// <param name="metadata">Request headers (gRPC metadata), e.g. the route a gateway forwards by (<see cref="Security.RouteProof"/>).</param>
    /// <param name="deadline">How long the whole call may take; none when null.</param>
    /// <param name="cancellationToken">Cancels the call for its whole life.</param>
    public async Task<DuplexCall<TRequest, TResponse>> StartAsync<TRequest, TResponse>(string path, IEnumerable<KeyValuePair<string, string>> metadata,
        TimeSpan? deadline = null, CancellationToken cancellationToken = default)
        where TRequest : IMessage<TRequest> where TResponse : IMessage<TResponse>, new()
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(metadata);
        var body = new StreamingContent();
        var request = new HttpRequestMessage(HttpMethod.Post, new Uri(Address, path))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = body,
        };
        // A grpcio server refuses a call without "te: trailers".
        request.Headers.TE.Add(new TransferCodingWithQualityHeaderValue("trailers"));
        foreach (var (name, value) in _metadata.Concat(metadata)) request.Headers.TryAddWithoutValidation(name, value);
        _security.Authenticate(request, path);
        CancellationTokenSource? expiry = null;
        CancellationTokenSource lifetime;
        if (deadline is { } limit)
        {
            request.Headers.TryAddWithoutValidation("grpc-timeout", GrpcTimeout.Format(limit));
            // A timer takes at most about 49 days; a longer deadline is only sent, not timed here.
            expiry = new CancellationTokenSource(limit <= TimeSpan.Zero ? TimeSpan.Zero
                : limit.TotalMilliseconds >= uint.MaxValue - 1 ? Timeout.InfiniteTimeSpan : limit);
            lifetime = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, expiry.Token);
        }
        else
        {
            lifetime = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        }

        // A grpcio server sends its headers only with its first response, so the request body must already be open
        // for writing while the response headers are awaited.
        var responseTask = SendAsync(request, path, lifetime.Token);
        Stream requestStream;
        try
        {
            var first = await Task.WhenAny(body.Stream, responseTask).ConfigureAwait(false);
            if (first == body.Stream)
            {
                requestStream = await body.Stream.ConfigureAwait(false);
            }
            else
            {
                // The server answered before SocketsHttpHandler asked for the body (an immediate trailers-only
                // error, say): a failed send throws here; otherwise requests go nowhere and the reader gets the status.
                await responseTask.ConfigureAwait(false);
                requestStream = Stream.Null;
            }
        }
        catch (OperationCanceledException e)
        {
            lifetime.Dispose();
            expiry?.Dispose();
            body.Dispose();
            if (cancellationToken.IsCancellationRequested) throw;
            throw new RpcException(new Status(StatusCode.DeadlineExceeded, $"{path} on {Address} did not start before its deadline.", e));
        }
        catch (Exception)
        {
            lifetime.Dispose();
            expiry?.Dispose();
            body.Dispose();
            throw;
        }
        return new DuplexCall<TRequest, TResponse>(path, requestStream, body, responseTask, lifetime, expiry, _options);
    }

    private async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, string path, CancellationToken cancellationToken)
    {
        try
        {
            return await _http.SendAsync(request, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new RpcException(new Status(StatusCode.Unavailable, $"{path} on {Address}: {e.Message}", e));
        }
    }

    /// <summary>Closes the channel's connections; calls still running fail.</summary>
    public void Dispose() => _http.Dispose();
}
