using System.IO.Pipelines;
using Google.Protobuf;
using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc;

/// <summary>Reads a stream of gRPC messages of type <typeparamref name="T"/> from a pipe.</summary>
public sealed class MessageReader<T>(PipeReader reader, RpcOptions options) where T : IMessage<T>, new()
{
    private static readonly MessageParser<T> Parser = new(() => new T());

    /// <summary>The next message, or null at the end of the stream.</summary>
    /// <exception cref="RpcException">A malformed, oversized or truncated message.</exception>
    public async ValueTask<T?> ReadAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            try
            {
                if (MessageFraming.TryReadMessage(ref buffer, options.MaxMessageSize, out var message))
                {
                    try
                    {
                        return Parser.ParseFrom(message);
                    }
                    catch (InvalidProtocolBufferException e)
                    {
                        throw new RpcException(StatusCode.Internal, $"Malformed {typeof(T).Name} message: {e.Message}", e);
                    }
                }
                if (result.IsCompleted)
                {
                    if (buffer.Length > 0) throw new RpcException(StatusCode.Internal, $"The stream ended inside a message ({buffer.Length} bytes left).");
                    return default;
                }
            }
            finally
            {
                reader.AdvanceTo(buffer.Start, buffer.End);
            }
        }
    }

    /// <summary>All messages until the end of the stream.</summary>
    public async IAsyncEnumerable<T> ReadAllAsync([System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        while (await ReadAsync(cancellationToken).ConfigureAwait(false) is { } message) yield return message;
    }
}

/// <summary>Writes gRPC messages to a pipe, flushing each so a peer waiting for it is never left hanging.</summary>
public sealed class MessageWriter<T>(PipeWriter writer) where T : IMessage<T>
{
    private readonly SemaphoreSlim _gate = new(1, 1);

    /// <summary>Writes and flushes one message; safe to call from several threads.</summary>
    public async ValueTask WriteAsync(T message, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            MessageFraming.Write(writer, message);
            var result = await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
            if (result.IsCanceled || result.IsCompleted) throw new RpcException(StatusCode.Unavailable, "The stream was closed by the peer.");
        }
        finally
        {
            _gate.Release();
        }
    }
}
