using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc;

/// <summary>
/// Writes gRPC messages to a pipe, serializing each straight into the pipe's buffers and flushing it, so a peer
/// waiting for it is never left hanging (a ping-pong over HTTP/2 stalls without the flush).
/// </summary>
public sealed class MessageWriter<T> where T : IMessage<T>
{
    /// <summary>From this size on, a pre-serialized body is written to the stream from where it is rather than copied.</summary>
    private const int CopyBodyLimit = 32 * 1024;

    /// <summary>
    /// The most bytes SocketsHttpHandler sends in one DATA frame (it ignores a larger SETTINGS_MAX_FRAME_SIZE), hence
    /// the most one queued write is sure to cover.
    /// </summary>
    private const int SingleFrameLimit = 16 * 1024;

    /// <summary>How long after the last overlapped flush the safety flush follows.</summary>
    private static readonly TimeSpan LateFlushDelay = TimeSpan.FromMilliseconds(1);

    private readonly PipeWriter _writer;
    private readonly Stream? _directStream;
    private readonly Func<Exception, CancellationToken, ValueTask<RpcException?>>? _translateFailure;
    private readonly Timer? _lateFlush;
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

    /// <summary>
    /// A writer onto <paramref name="writer"/>, a pipe over <paramref name="directStream"/>: messages given in two
    /// parts go to the stream directly, around the pipe (empty between messages, since each is flushed).
    /// </summary>
    /// <param name="writer">The pipe over <paramref name="directStream"/>.</param>
    /// <param name="options">The limits.</param>
    /// <param name="directStream">The stream beneath the pipe.</param>
    /// <param name="translateFailure">
    /// What a failed write means for the call (its deadline passed, it was cancelled): an RpcException to throw
    /// instead, or null to let the failure through.
    /// </param>
    internal MessageWriter(PipeWriter writer, RpcOptions options, Stream directStream, Func<Exception, CancellationToken, ValueTask<RpcException?>> translateFailure)
        : this(writer, options)
    {
        _directStream = directStream;
        _translateFailure = translateFailure;
        _lateFlush = new Timer(static state => ((MessageWriter<T>)state!).FlushLate(), this, Timeout.Infinite, Timeout.Infinite);
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

    /// <summary>
    /// Writes and flushes one message given already serialized, in two parts that together are its protobuf bytes:
    /// typically <paramref name="head"/> holds the fields and the key and length of a bytes field that comes last, and
    /// <paramref name="body"/> that field's content. On a client's request stream the message goes around the pipe:
    /// prefix, head and a small body in one write, a large body from where it is. Safe to call from several threads.
    /// </summary>
    /// <exception cref="RpcException">
    /// RESOURCE_EXHAUSTED when the message exceeds RpcOptions.MaxMessageSize; UNAVAILABLE when the peer closed the stream.
    /// </exception>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask WriteAsync(ReadOnlyMemory<byte> head, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        long size = (long)head.Length + body.Length;
        if (size > _maxMessageSize)
            throw new RpcException(StatusCode.ResourceExhausted,
                $"Sending message of {size} bytes exceeds the limit of {_maxMessageSize} (see RpcOptions.MaxMessageSize).");
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureOpen();
            if (_directStream is not null)
            {
                await WriteDirectAsync(_directStream, (int)size, head, body, cancellationToken).ConfigureAwait(false);
                return;
            }
            MessageFraming.WriteHeader(_writer, (int)size);
            _writer.Write(head.Span);
            _writer.Write(body.Span);
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

    /// <summary>
    /// Writes one message to the stream beneath the pipe (empty between messages, so the order holds): prefix, head
    /// and a small body in one write; a large body from where it is. Up to one DATA frame, the flush is queued right
    /// behind the write instead of after it completes: SocketsHttpHandler hands every write and every flush to its
    /// connection's writer loop, and this way both go out in one pass of it rather than two round trips.
    /// </summary>
    private async ValueTask WriteDirectAsync(Stream stream, int size, ReadOnlyMemory<byte> head, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        bool copyBody = body.Length < CopyBodyLimit;
        int length = MessageFraming.HeaderSize + head.Length + (copyBody ? body.Length : 0);
        var prefixed = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            MessageFraming.WriteHeader(prefixed, size);
            head.Span.CopyTo(prefixed.AsSpan(MessageFraming.HeaderSize));
            if (copyBody) body.Span.CopyTo(prefixed.AsSpan(MessageFraming.HeaderSize + head.Length));
            ReadOnlyMemory<byte> last = prefixed.AsMemory(0, length);
            if (!copyBody)
            {
                await stream.WriteAsync(last, cancellationToken).ConfigureAwait(false);
                last = body;
            }
            if (last.Length > SingleFrameLimit)
            {
                // Later frames of a longer write are queued only as earlier ones are taken: flush after all of them.
                await stream.WriteAsync(last, cancellationToken).ConfigureAwait(false);
                await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
                return;
            }
            var write = stream.WriteAsync(last, cancellationToken);
            var flush = stream.FlushAsync(cancellationToken);
            // A write that first had to wait for flow-control credit is queued behind the flush and not covered by
            // it; a flush shortly after the last such pair covers that case, so no message is left in the buffer.
            _lateFlush!.Change(LateFlushDelay, Timeout.InfiniteTimeSpan);
            await write.ConfigureAwait(false);
            await flush.ConfigureAwait(false);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(prefixed);
        }
    }

    private void FlushLate()
    {
        try
        {
            // Observed here: a broken stream fails the next write anyway.
            _directStream!.FlushAsync().ContinueWith(static flush => _ = flush.Exception, CancellationToken.None,
                TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        catch (ObjectDisposedException)
        {
            // The call is over.
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
        if (result.IsCanceled || result.IsCompleted) throw new RpcException(StatusCode.Unavailable, "The stream was closed by the peer.");
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
        e is IOException or ObjectDisposedException ? new RpcException(StatusCode.Unavailable, $"The stream broke: {e.Message}", e) : null;

    /// <summary>Ends the stream after any write in progress (a client's half-close).</summary>
    internal async ValueTask CompleteAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_completed) return;
            _completed = true;
            _lateFlush?.Dispose();
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
