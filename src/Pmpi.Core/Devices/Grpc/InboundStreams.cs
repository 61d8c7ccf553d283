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

        var stream = new InboundStream(engine, source, identity.Rank, new AckSender(responses, call.CancellationToken));
        try
        {
            // Each frame is decoded inside the read, straight from the request pipe's buffers, and a completed message
            // is delivered on this thread: no task or copy between the socket and the matching engine.
            while (await requests.ReadAsync(InboundStream.OnFrame, stream, call.CancellationToken).ConfigureAwait(false))
            {
            }
            stream.EnsureBetweenMessages();
        }
        catch (Exception e) when (e is RpcException or IOException or OperationCanceledException && !call.CancellationToken.IsCancellationRequested)
        {
            stream.Dispose();
            engine.Abort(new MpiException(ErrorClass.Transport, $"Transport from rank {source} to rank {identity.Rank} failed: {e.Message}", e));
            throw;
        }
    }

    /// <summary>One sending rank's stream: reassembles its messages, one at a time, into pooled buffers.</summary>
    private sealed class InboundStream(MatchingEngine engine, int source, int rank, AckSender acks) : IDisposable
    {
        public static readonly Action<ReadOnlySequence<byte>, InboundStream> OnFrame = static (bytes, stream) => stream.Receive(bytes);

        private DataHeader _header;
        private byte[]? _buffer;
        private int _received;

        public void EnsureBetweenMessages()
        {
            if (_buffer is not null)
                throw new RpcException(StatusCode.Aborted, $"Rank {source} disconnected in the middle of a message of {_header.TotalLength} bytes to rank {rank}.");
        }

        public void Dispose()
        {
            if (_buffer is not null) ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }

        private void Receive(ReadOnlySequence<byte> bytes)
        {
            var kind = FrameCodec.Read(bytes, out var header, out var payload, out _);
            switch (kind)
            {
                case Frame.BodyOneofCase.Data when _buffer is null:
                    Start(header);
                    break;
                case Frame.BodyOneofCase.Chunk when _buffer is not null:
                    break;
                default:
                    throw new RpcException(StatusCode.InvalidArgument, $"Unexpected {kind} frame from rank {source}{(_buffer is null ? "" : " inside a message")}.");
            }
            if (_received + payload.Length > _header.TotalLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} sent more than the {_header.TotalLength} bytes it announced (tag {_header.Tag}) to rank {rank}.");
            payload.CopyTo(_buffer.AsSpan(_received));
            _received += (int)payload.Length;
            if (_received == _header.TotalLength) Deliver();
        }

        private void Start(DataHeader header)
        {
            if (header.TotalLength < 0 || header.TotalLength > Array.MaxLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} announced a message of {header.TotalLength} bytes to rank {rank}.");
            if (header.TypeCode is < (int)PayloadCode.Byte or > (int)PayloadCode.Serialized)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {source} sent unknown payload type code {header.TypeCode} (tag {header.Tag}).");
            _header = header;
            _buffer = ArrayPool<byte>.Shared.Rent((int)header.TotalLength);
            _received = 0;
        }

        private void Deliver()
        {
            var header = _header;
            var buffer = _buffer!;
            _buffer = null;
            var type = new PayloadType((PayloadCode)header.TypeCode, header.IsArray, header.TypeName.Length == 0 ? null : header.TypeName);
            engine.Deliver(new Message(new Envelope(header.Context, header.Source, header.Tag), type, buffer.AsMemory(0, _received), buffer,
                header.Synchronous ? acks.For(header.Sequence) : null));
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
