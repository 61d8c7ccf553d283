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
    private readonly PipeWriter _writer;
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
            if (_completed) throw new InvalidOperationException("The stream was already completed; no message may follow.");
            MessageFraming.Write(_writer, message, _maxMessageSize);
            var result = await _writer.FlushAsync(cancellationToken).ConfigureAwait(false);
            if (result.IsCanceled || result.IsCompleted) throw new RpcException(StatusCode.Unavailable, "The stream was closed by the peer.");
        }
        catch (IOException e)
        {
            throw new RpcException(StatusCode.Unavailable, $"The stream broke: {e.Message}", e);
        }
        finally
        {
            _gate.Release();
        }
    }

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
