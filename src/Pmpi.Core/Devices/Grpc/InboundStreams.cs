using System.Buffers;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The receiving half of the gRPC device: serves RankTransport.Connect, and reads the peer's frames off either end
/// of a <see cref="PairStream"/>. Each served call is opened by one peer; its requests carry that peer's messages,
/// and its responses carry this rank's messages back if <see cref="PeerStreams"/> chooses the call for them. Messages
/// are reassembled from chunks and handed to the matching engine in stream order, and synchronous sends are
/// acknowledged on the same stream the other way once matched. A malformed stream ends that call and aborts the
/// rank's pending operations with an error naming both ranks; it never brings the process down.
/// </summary>
internal sealed class InboundStreams(RankIdentity identity, MatchingEngine engine, PeerStreams peers)
{
    /// <summary>The most a Hello may take (its ids and the job key need a few hundred bytes), so a caller not yet checked makes the endpoint hold little.</summary>
    private const int MaxHelloSize = 4096;

    /// <summary>How long a caller has to send its Hello once the stream is open.</summary>
    private static readonly TimeSpan HelloTimeout = TimeSpan.FromSeconds(10);

    private int _accepted;

    /// <summary>How many Connect calls this rank's endpoint has accepted (opened with a valid Hello).</summary>
    public int Accepted => Volatile.Read(ref _accepted);

    public async Task ServeAsync(MessageReader<Frame> requests, MessageWriter<Frame> responses, ServerCallContext call)
    {
        var first = await ReadHelloAsync(requests, call.CancellationToken).ConfigureAwait(false);
        if (first?.Hello is not { } hello) throw new RpcException(StatusCode.InvalidArgument, "A RankTransport stream must open with a Hello frame.");
        if (hello.JobId != identity.JobId || !JobTickets.TokenMatches(identity.JobToken, hello.JobToken))
            throw new RpcException(StatusCode.PermissionDenied, $"Rank {identity.Rank} of job {identity.JobId} refuses a stream for job '{hello.JobId}' or with a wrong token.");
        int source = hello.SourceWorldRank;
        // A spawned rank may dial before this one heard of it, so the bound is what any job may hold.
        if ((uint)source >= JobTickets.MaxJobRanks)
            throw new RpcException(StatusCode.InvalidArgument, $"Source rank {source} is beyond the {JobTickets.MaxJobRanks} ranks a job may have.");
        // A stream relayed through the gateways reaches the rank its Hello names; anywhere else it was misrouted.
        if (hello.DestinationWorldRank != identity.Rank)
            throw new RpcException(StatusCode.NotFound, $"Rank {identity.Rank} of job {identity.JobId} refuses a stream from rank {source} for rank {hello.DestinationWorldRank}: that rank is not here.");
        Interlocked.Increment(ref _accepted);

        var served = new ServedStream(source, responses, call.CancellationToken);
        peers.Offer(served);
        var stream = new InboundStream(engine, served, identity.Rank);
        bool sendingHere = false;
        try
        {
            // Each frame is decoded inside the read, straight from the request pipe's buffers, and a completed message
            // is delivered on this thread: no task or copy between the socket and the matching engine.
            while (await requests.ReadAsync(InboundStream.OnFrame, stream, call.CancellationToken).ConfigureAwait(false))
            {
            }
            stream.EnsureBetweenMessages();
        }
        catch (Exception e) when (e is RpcException or IOException or OperationCanceledException && (!call.CancellationToken.IsCancellationRequested || peers.BreakAborts(source)))
        {
            var detail = peers.BreakAborts(source) ? $" (between {peers.Describe(source)}; the call rank {source} opened broke)" : "";
            engine.Abort(new MpiException(ErrorClass.Transport, $"Transport from rank {source} to rank {identity.Rank} failed{detail}: {e.Message}", e));
            throw;
        }
        finally
        {
            stream.Dispose();
            sendingHere = peers.Withdraw(served);
        }
        if (!sendingHere) return;
        try
        {
            // The peer has finished sending, this rank has not: the responses stay open until it has.
            await served.SendingDone.WaitAsync(call.CancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The peer went away; the next write on this stream fails and fails this rank's sends.
        }
    }

    private static async Task<Frame?> ReadHelloAsync(MessageReader<Frame> requests, CancellationToken callEnded)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(callEnded);
        deadline.CancelAfter(HelloTimeout);
        try
        {
            return await requests.ReadAsync(MaxHelloSize, deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!callEnded.IsCancellationRequested)
        {
            throw new RpcException(StatusCode.DeadlineExceeded, $"A RankTransport stream must open with a Hello within {HelloTimeout.TotalSeconds:0} s.");
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.ResourceExhausted)
        {
            throw new RpcException(StatusCode.ResourceExhausted, $"A RankTransport stream must open with a Hello of at most {MaxHelloSize} bytes: {e.Message}");
        }
    }

    /// <summary>
    /// Reads the responses of a call this rank dialed until the peer ends them. A broken message or a frame that is
    /// not one aborts the rank as on a served call; a direct stream that breaks between messages only fails the
    /// synchronous sends awaiting an acknowledgement there (the peer may simply have finished); one through the
    /// gateways aborts the rank (<see cref="PeerStreams.BreakAborts"/>).
    /// </summary>
    public async Task ReceiveAsync(DialedStream dialed)
    {
        var call = dialed.Call;
        var stream = new InboundStream(engine, dialed, identity.Rank);
        try
        {
            while (await call.Responses.ReadAsync(InboundStream.OnFrame, stream, call.CancellationToken).ConfigureAwait(false))
            {
            }
            stream.EnsureBetweenMessages();
        }
        catch (Exception e) when (e is RpcException or IOException or OperationCanceledException or HttpRequestException)
        {
            var error = new MpiException(ErrorClass.Transport, $"Transport from rank {dialed.Peer} to rank {identity.Rank} failed, on rank {identity.Rank}'s call to rank {dialed.Peer} ({(peers.BreakAborts(dialed.Peer) ? peers.Describe(dialed.Peer) : dialed.Way)}): {e.Message}", e);
            dialed.Sender?.FailAwaitingAcks(error);
            if ((stream.Violated || stream.InsideMessage || peers.BreakAborts(dialed.Peer)) && !call.CancellationToken.IsCancellationRequested) engine.Abort(error);
        }
        finally
        {
            stream.Dispose();
        }
    }

    /// <summary>
    /// The frames one peer sends on one stream: reassembles its messages, one at a time, into pooled buffers, and
    /// passes acknowledgements of this rank's synchronous sends to the stream's sender.
    /// </summary>
    private sealed class InboundStream(MatchingEngine engine, PairStream pair, int rank) : IDisposable
    {
        public static readonly Action<ReadOnlySequence<byte>, InboundStream> OnFrame = static (bytes, stream) => stream.Receive(bytes);

        private readonly AckSender _acks = new(pair);
        private readonly int _source = pair.Peer;
        private DataHeader _header;
        private IncomingBuffer? _buffer; // the message being reassembled
        private int _received;

        /// <summary>The peer broke the protocol (this reader threw).</summary>
        public bool Violated { get; private set; }

        /// <summary>Part of a message has arrived, not all of it.</summary>
        public bool InsideMessage => _buffer is not null;

        public void EnsureBetweenMessages()
        {
            if (_buffer is null) return;
            Violated = true;
            throw new RpcException(StatusCode.Aborted, $"Rank {_source} disconnected in the middle of a message of {_header.TotalLength} bytes to rank {rank}.");
        }

        public void Dispose()
        {
            _buffer?.Return();
            _buffer = null;
        }

        private void Receive(ReadOnlySequence<byte> bytes)
        {
            try
            {
                Handle(bytes);
            }
            catch (RpcException)
            {
                Violated = true;
                throw;
            }
        }

        private void Handle(ReadOnlySequence<byte> bytes)
        {
            var kind = FrameCodec.Read(bytes, out var header, out var payload, out var other);
            switch (kind)
            {
                case Frame.BodyOneofCase.Data when _buffer is null:
                    Start(header);
                    break;
                case Frame.BodyOneofCase.Chunk when _buffer is not null:
                    break;
                case Frame.BodyOneofCase.Ack when pair.Sender is { } sender:
                    // An acknowledgement is a frame of its own and may fall between the frames of a message.
                    sender.Acknowledge(other!.Ack.Sequence);
                    return;
                default:
                    throw new RpcException(StatusCode.InvalidArgument, $"Unexpected {kind} frame from rank {_source}{(_buffer is null ? "" : " inside a message")}.");
            }
            if (_received + payload.Length > _header.TotalLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {_source} sent more than the {_header.TotalLength} bytes it announced (tag {_header.Tag}) to rank {rank}.");
            payload.CopyTo(_buffer!.Value.Bytes.Span[_received..]);
            _received += (int)payload.Length;
            if (_received == _header.TotalLength) Deliver();
        }

        private void Start(DataHeader header)
        {
            if (header.TotalLength < 0 || header.TotalLength > Array.MaxLength)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {_source} announced a message of {header.TotalLength} bytes to rank {rank}.");
            if (header.TypeCode is < (int)PayloadCode.Byte or > (int)PayloadCode.Fields)
                throw new RpcException(StatusCode.InvalidArgument, $"Rank {_source} sent unknown payload type code {header.TypeCode} (tag {header.Tag}).");
            _header = header;
            _buffer = IncomingBuffer.For(TypeOf(header), (int)header.TotalLength, engine, new Envelope(header.Context, header.Source, header.Tag));
            _received = 0;
        }

        private void Deliver()
        {
            var header = _header;
            var buffer = _buffer!.Value;
            _buffer = null;
            engine.Deliver(buffer.ToMessage(new Envelope(header.Context, header.Source, header.Tag), TypeOf(header),
                header.Synchronous ? _acks.For(header.Sequence) : null));
        }

        private static PayloadType TypeOf(DataHeader header) =>
            new((PayloadCode)header.TypeCode, header.IsArray, header.TypeName.Length == 0 ? null : header.TypeName);
    }

    /// <summary>Acknowledges matched synchronous sends on the stream they came from, the other way.</summary>
    private sealed class AckSender(PairStream pair)
    {
        public IDeliveryReceipt For(ulong sequence) => new Receipt(this, sequence);

        private void Send(ulong sequence) =>
            // Fire and forget: the receiving rank must not wait on its peer; a dead stream fails the sender by itself.
            _ = pair.Outgoing.WriteAsync(new Frame { Ack = new Ack { Sequence = sequence } }, pair.CancellationToken).AsTask()
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
