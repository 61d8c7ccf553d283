using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc;

/// <summary>
/// Writes gRPC messages to a pipe, serializing each straight into the pipe's buffers and flushing it, so a peer
/// waiting for it is never left hanging (a ping-pong over HTTP/2 stalls without the flush).
/// </summary>
public sealed class MessageWriter<T> where T : IMessage<T>
{
    private readonly PipeWriter _writer;
    private readonly Func<Exception, CancellationToken, ValueTask<RpcException?>>? _translateFailure;
    private readonly int _maxMessageSize;
    private readonly SemaphoreSlim _gate = new(1, 1);
    private bool _completed;

    /// <summary>A writer onto <paramref name="writer"/> with the default limits.</summary>
    public MessageWriter(PipeWriter writer)
        : this(writer, RpcOptions.Default)
    {
    }

    /// <summary>A writer onto <paramref name="writer"/> refusing messages over <see cref="RpcOptions.MaxMessageSize"/>.</summary>
    public MessageWriter(PipeWriter writer, RpcOptions options)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(options);
        _writer = writer;
        _maxMessageSize = options.MaxMessageSize;
    }

    /// <summary>A writer onto <paramref name="writer"/> whose failed writes report what <paramref name="translateFailure"/> says.</summary>
    /// <param name="writer">The pipe.</param>
    /// <param name="options">The limits.</param>
    /// <param name="translateFailure">
    /// What a failed write means for the call (its deadline passed, it was cancelled): an RpcException to throw
    /// instead, or null to let the failure through.
    /// </param>
    internal MessageWriter(PipeWriter writer, RpcOptions options, Func<Exception, CancellationToken, ValueTask<RpcException?>> translateFailure)
        : this(writer, options)
    {
        _translateFailure = translateFailure;
    }

    /// <summary>Writes and flushes one message; safe to call from several threads (messages never interleave).</summary>
    /// <exception cref="RpcException">
    /// RESOURCE_EXHAUSTED when the message exceeds RpcOptions.MaxMessageSize; UNAVAILABLE when the peer closed the stream.
    /// </exception>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask WriteAsync(T message, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(message);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureOpen();
            MessageFraming.Write(_writer, message, _maxMessageSize);
            await FlushPipeAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not RpcException)
        {
            if (await FailureOfAsync(e, cancellationToken).ConfigureAwait(false) is { } error) throw error;
            throw;
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>UNAVAILABLE for a broken stream; null for anything else (the caller's cancellation, a misuse).</summary>
    private void EnsureOpen()
    {
        if (_completed) throw new InvalidOperationException("The stream was already completed; no message may follow.");
    }

    private async ValueTask FlushPipeAsync(CancellationToken cancellationToken)
    {
        var result = await _writer.FlushAsync(cancellationToken).ConfigureAwait(false);
        if (result.IsCanceled || result.IsCompleted) throw new RpcException(new Status(StatusCode.Unavailable, "The stream was closed by the peer."));
    }

    /// <summary>
    /// The status a failed write reports: the call's own (when the server already ended it) or UNAVAILABLE for a
    /// broken stream; null lets the caller's cancellation or misuse through unchanged.
    /// </summary>
    private async ValueTask<RpcException?> FailureOfAsync(Exception e, CancellationToken cancellationToken) =>
        (_translateFailure is null ? null : await _translateFailure(e, cancellationToken).ConfigureAwait(false)) ?? Broken(e);

    // SocketsHttpHandler disposes a request stream whose connection failed under it (a TLS endpoint spoken to in
    // cleartext, say): that is a broken stream too, not the caller's misuse.
    private static RpcException? Broken(Exception e) =>
        e is IOException or ObjectDisposedException ? new RpcException(new Status(StatusCode.Unavailable, $"The stream broke: {e.Message}", e)) : null;

    /// <summary>Ends the stream after any write in progress (a client's half-close).</summary>
    internal async ValueTask CompleteAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_completed) return;
            _completed = true;
            await _writer.CompleteAsync().ConfigureAwait(false);
        }
        catch (IOException)
        {
            // The peer is gone; the call's status tells the caller why.
        }
        finally
        {
            _gate.Release();
        }
    }
}
