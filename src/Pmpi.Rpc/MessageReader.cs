using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc;

/// <summary>Reads a stream of gRPC messages of type <typeparamref name="T"/> from a pipe; one reader at a time.</summary>
public sealed class MessageReader<T> where T : IMessage<T>, new()
{
    private static readonly MessageParser<T> Parser = new(() => new T());
    private readonly PipeReader _reader;
    private readonly RpcOptions _options;

    /// <summary>A reader of the messages arriving on <paramref name="reader"/>, within <paramref name="options"/>' limits.</summary>
    public MessageReader(PipeReader reader, RpcOptions options)
    {
        ArgumentNullException.ThrowIfNull(reader);
        ArgumentNullException.ThrowIfNull(options);
        _reader = reader;
        _options = options;
    }

    /// <summary>The next message, or null at the end of the stream.</summary>
    /// <exception cref="RpcException">A malformed, compressed, oversized or truncated message.</exception>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))] // one read per message: don't allocate a box each
    public ValueTask<T?> ReadAsync(CancellationToken cancellationToken) => ReadAsync(_options.MaxMessageSize, cancellationToken);

    /// <summary>
    /// The next message, or null at the end of the stream, refused when it is over <paramref name="maxMessageSize"/>
    /// bytes: for a message that must be small, such as the one that says who a caller is, so that an unknown caller
    /// cannot make the server hold a large one before it is checked.
    /// </summary>
    /// <exception cref="RpcException">A malformed, compressed, oversized or truncated message.</exception>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<T?> ReadAsync(int maxMessageSize, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessageSize);
        var parsed = new ParsedMessage();
        return await ReadAsync(ParsedMessage.Parse, parsed, Math.Min(maxMessageSize, _options.MaxMessageSize), cancellationToken).ConfigureAwait(false) ? parsed.Message : default;
    }

    /// <summary>
    /// Reads the next message without parsing it into a <typeparamref name="T"/>: <paramref name="handler"/> gets its
    /// protobuf bytes straight from the pipe's buffers, valid only until it returns, so that a large bytes field can
    /// be copied once to where it belongs instead of into a ByteString first.
    /// </summary>
    /// <returns>True when a message was handled; false at the end of the stream.</returns>
    /// <exception cref="RpcException">A compressed, oversized or truncated message, or whatever the handler throws.</exception>
    public ValueTask<bool> ReadAsync<TState>(Action<ReadOnlySequence<byte>, TState> handler, TState state, CancellationToken cancellationToken) =>
        ReadAsync(handler, state, _options.MaxMessageSize, cancellationToken);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> ReadAsync<TState>(Action<ReadOnlySequence<byte>, TState> handler, TState state, int maxMessageSize, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(handler);
        while (true)
        {
            var result = await _reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            bool handled = false;
            try
            {
                if (MessageFraming.TryReadMessage(ref buffer, maxMessageSize, out var message))
                {
                    handled = true;
                    handler(message, state);
                    return true;
                }
                if (result.IsCompleted)
                {
                    if (buffer.Length > 0) throw new RpcException(StatusCode.Internal, $"The stream ended inside a message ({buffer.Length} bytes left).");
                    return false;
                }
                if (result.IsCanceled) throw new OperationCanceledException("The read was cancelled.");
            }
            finally
            {
                // After a whole message the rest is unexamined: the next read must return it at once, since it may
                // already hold the next message (marking it examined would wait for bytes that may never come).
                // Without a whole message everything was examined: wait for more.
                if (handled) _reader.AdvanceTo(buffer.Start);
                else _reader.AdvanceTo(buffer.Start, buffer.End);
            }
        }
    }

    /// <summary>All messages until the end of the stream.</summary>
    public async IAsyncEnumerable<T> ReadAllAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        while (await ReadAsync(cancellationToken).ConfigureAwait(false) is { } message) yield return message;
    }

    /// <summary>Where the parsing form of ReadAsync receives its message.</summary>
    private sealed class ParsedMessage
    {
        public static readonly Action<ReadOnlySequence<byte>, ParsedMessage> Parse = static (bytes, target) =>
        {
            try
            {
                target.Message = Parser.ParseFrom(bytes);
            }
            catch (InvalidProtocolBufferException e)
            {
                throw new RpcException(StatusCode.Internal, $"Malformed {typeof(T).Name} message: {e.Message}", e);
            }
        };

        public T? Message { get; private set; }
    }
}
