using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Core;
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
    public async ValueTask<T?> ReadAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await _reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            bool found = false;
            try
            {
                if (MessageFraming.TryReadMessage(ref buffer, _options.MaxMessageSize, out var message))
                {
                    found = true;
                    return Parse(message);
                }
                if (result.IsCompleted)
                {
                    if (buffer.Length > 0) throw new RpcException(new Status(StatusCode.Internal, $"The stream ended inside a message ({buffer.Length} bytes left)."));
                    return default;
                }
                if (result.IsCanceled) throw new OperationCanceledException("The read was cancelled.");
            }
            finally
            {
                // After a whole message the rest is unexamined: the next read must return it at once, since it may
                // already hold the next message (marking it examined would wait for bytes that may never come).
                // Without a whole message everything was examined: wait for more.
                if (found) _reader.AdvanceTo(buffer.Start);
                else _reader.AdvanceTo(buffer.Start, buffer.End);
            }
        }
    }

    /// <summary>All messages until the end of the stream.</summary>
    public async IAsyncEnumerable<T> ReadAllAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        while (await ReadAsync(cancellationToken).ConfigureAwait(false) is { } message) yield return message;
    }

    private static T Parse(ReadOnlySequence<byte> bytes)
    {
        try
        {
            return Parser.ParseFrom(bytes);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw new RpcException(new Status(StatusCode.Internal, $"Malformed {typeof(T).Name} message: {e.Message}", e));
        }
    }
}
