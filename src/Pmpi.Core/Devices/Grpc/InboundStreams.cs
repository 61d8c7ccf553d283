using System.Buffers;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The receiving half of the gRPC device: serves RankTransport.Connect. Each call is one sending rank's stream;
/// its messages are reassembled from chunks and handed to the matching engine in stream order, and synchronous
/// sends are acknowledged on the response stream once matched. A malformed stream ends that call and aborts the
/// rank's pending operations with an error naming both ranks; it never brings the process down.
/// </summary>
internal sealed class InboundStreams(RankIdentity identity, MatchingEngine engine)
{
    public async Task ServeAsync(MessageReader<Frame> requests, MessageWriter<Frame> responses, ServerCallContext call)
    {
        var first = await requests.ReadAsync(call.CancellationToken).ConfigureAwait(false);
        if (first?.Hello is not { } hello) throw new RpcException(StatusCode.InvalidArgument, "A RankTransport stream must open with a Hello frame.");
        if (hello.JobId != identity.JobId || hello.JobToken != identity.JobToken)
            throw new RpcException(StatusCode.PermissionDenied, $"Rank {identity.Rank} of job {identity.JobId} refuses a stream for job '{hello.JobId}' or with a wrong token.");
        int source = hello.SourceWorldRank;
        if ((uint)source >= (uint)identity.Size)
            throw new RpcException(StatusCode.InvalidArgument, $"Source rank {source} is not in this job of {identity.Size} ranks.");

        var acks = new AckSender(responses, call.CancellationToken);
        Assembly? pending = null;
        try
        {
            while (await requests.ReadAsync(call.CancellationToken).ConfigureAwait(false) is { } frame)
            {
                switch (frame.BodyCase)
                {
                    case Frame.BodyOneofCase.Data when pending is null:
                        pending = Assembly.Start(frame.Data, source, identity.Rank);
                        break;
                    case Frame.BodyOneofCase.Chunk when pending is not null:
                        pending.Append(frame.Chunk.Payload.Span, source, identity.Rank);
                        break;
                    default:
                        throw new RpcException(StatusCode.InvalidArgument, $"Unexpected {frame.BodyCase} frame from rank {source}{(pending is null ? "" : " inside a message")}.");
                }
                if (pending is { IsComplete: true })
                {
                    engine.Deliver(pending.ToMessage(pending.Synchronous ? acks.For(pending.Sequence) : null));
                    pending = null;
                }
            }
            if (pending is not null)
                throw new RpcException(StatusCode.Aborted, $"Rank {source} disconnected in the middle of a message of {pending.TotalLength} bytes to rank {identity.Rank}.");
        }
        catch (Exception e) when (e is RpcException or IOException or OperationCanceledException && !call.CancellationToken.IsCancellationRequested)
        {
            pending?.Dispose();
            engine.Abort(new MpiException(ErrorClass.Transport, $"Transport from rank {source} to rank {identity.Rank} failed: {e.Message}", e));
            throw;
        }
    }

    /// <summary>A message being reassembled into one pooled buffer.</summary>
    private sealed class Assembly : IDisposable
    {
        private readonly Data _header;
        private byte[]? _buffer;
        private int _received;

        private Assembly(Data header, byte[] buffer)
        {
            _header = header;
            _buffer = buffer;
        }

        public ulong Sequence => _header.Sequence;

        public bool Synchronous => _header.Synchronous;

        public long TotalLength => _header.TotalLength;

        public bool IsComplete => _received == _header.TotalLength;

        public static Assembly Start(Data header, int source, int rank)
        {
            if (header.TotalLength < 0 || header.TotalLength > Array.MaxLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} announced a message of {header.TotalLength} bytes to rank {rank}.");
            if (header.TypeCode is < (int)PayloadCode.Byte or > (int)PayloadCode.Serialized)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} sent unknown payload type code {header.TypeCode} (tag {header.Tag}).");
            var assembly = new Assembly(header, ArrayPool<byte>.Shared.Rent((int)header.TotalLength));
            assembly.Append(header.Payload.Span, source, rank);
            return assembly;
        }

        public void Append(ReadOnlySpan<byte> part, int source, int rank)
        {
            if (_received + (long)part.Length > _header.TotalLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} sent more than the {_header.TotalLength} bytes it announced (tag {_header.Tag}) to rank {rank}.");
            part.CopyTo(_buffer.AsSpan(_received));
            _received += part.Length;
        }

        public Message ToMessage(IDeliveryReceipt? receipt)
        {
            var type = new PayloadType((PayloadCode)_header.TypeCode, _header.IsArray, _header.TypeName.Length == 0 ? null : _header.TypeName);
            var buffer = _buffer!;
            _buffer = null;
            return new Message(new Envelope(_header.Context, _header.Source, _header.Tag), type, buffer.AsMemory(0, _received), buffer, receipt);
        }

        public void Dispose()
        {
            if (_buffer is not null) ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }
    }

    /// <summary>Acknowledges matched synchronous sends on the stream they came from.</summary>
    private sealed class AckSender(MessageWriter<Frame> responses, CancellationToken cancellationToken)
    {
        public IDeliveryReceipt For(ulong sequence) => new Receipt(this, sequence);

        private void Send(ulong sequence) =>
            // Fire and forget: the receiving rank must not wait on its peer; a dead stream fails the sender by itself.
            _ = responses.WriteAsync(new Frame { Ack = new Ack { Sequence = sequence } }, cancellationToken).AsTask()
                .ContinueWith(t => _ = t.Exception, TaskContinuationOptions.OnlyOnFaulted);

        private sealed class Receipt(AckSender sender, ulong sequence) : IDeliveryReceipt
        {
            public void Delivered() => sender.Send(sequence);

            public void Failed(MpiException error)
            {
                // The receiver is aborting; the sender learns it from the job's abort.
            }
        }
    }
}
