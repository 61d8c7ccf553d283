using System.Buffers;
using System.Collections.Immutable;
using Grpc.Core;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;
// Pmpi.Status is an MPI status; this is a call's.
using RpcStatus = Grpc.Core.Status;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The receiving half of the gRPC device: admits RankTransport.Connect calls to this rank's endpoint, and reads the
/// peer's frames off either end of a <see cref="PairStream"/>. Each served call is opened by one peer; its requests
/// carry that peer's messages, and its responses carry this rank's messages back if <see cref="PeerStreams"/>
/// chooses the call for them. Frames are decoded on the connection's reader thread, straight from its buffer, and a
/// completed message is handed to the matching engine there; synchronous sends are acknowledged on the same stream
/// the other way once matched. A malformed stream ends that call and aborts the rank's pending operations with an
/// error naming both ranks; it never brings the process down.
/// </summary>
internal sealed class InboundStreams(RankIdentity identity, MatchingEngine engine, PeerStreams peers) : IPolledLinks
{
    private readonly Lock _polledLock = new();
    private ImmutableArray<GrpcStream> _polled = []; // the open calls, whose connections a waiting thread reads
    private ImmutableArray<ServedStream> _served = []; // every call peers opened, ended as this rank closes
    private int _accepted;

    /// <summary>How many Connect calls this rank's endpoint has accepted (opened with a valid Hello).</summary>
    public int Accepted => Volatile.Read(ref _accepted);

    /// <summary>Admits a call to this rank's endpoint by its first message, which must be a valid Hello, or refuses it.</summary>
    /// <exception cref="RpcException">The refusal, with its status.</exception>
    public IGrpcStreamReceiver Admit(GrpcStream call, ReadOnlySequence<byte> first)
    {
        Frame frame;
        try
        {
            frame = Frame.Parser.ParseFrom(first);
        }
        catch (Google.Protobuf.InvalidProtocolBufferException e)
        {
            throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"A RankTransport stream must open with a Hello frame: {e.Message}"));
        }
        if (frame.Hello is not { } hello) throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, "A RankTransport stream must open with a Hello frame."));
        if (hello.JobId != identity.JobId || !JobTickets.TokenMatches(identity.JobToken, hello.JobToken))
            throw new RpcException(new RpcStatus(StatusCode.PermissionDenied, $"Rank {identity.Rank} of job {identity.JobId} refuses a stream for job '{hello.JobId}' or with a wrong token."));
        int source = hello.SourceWorldRank;
        // A spawned rank may dial before this one heard of it, so the bound is what any job may hold.
        if ((uint)source >= JobTickets.MaxJobRanks)
            throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Source rank {source} is beyond the {JobTickets.MaxJobRanks} ranks a job may have."));
        // A stream relayed through the gateways reaches the rank its Hello names; anywhere else it was misrouted.
        if (hello.DestinationWorldRank != identity.Rank)
            throw new RpcException(new RpcStatus(StatusCode.NotFound, $"Rank {identity.Rank} of job {identity.JobId} refuses a stream from rank {source} for rank {hello.DestinationWorldRank}: that rank is not here."));
        Interlocked.Increment(ref _accepted);
        var served = new ServedStream(source, call);
        peers.Offer(served);
        lock (_polledLock)
        {
            _polled = _polled.Add(call);
            _served = _served.Add(served);
        }
        return new InboundStream(this, engine, identity.Rank, served);
    }

    /// <summary>Reads the responses of a call this rank dialed, from now on.</summary>
    public void Receive(DialedStream dialed)
    {
        lock (_polledLock) _polled = _polled.Add(dialed.Stream);
        dialed.Stream.Start(new InboundStream(this, engine, identity.Rank, dialed));
    }

    /// <summary>
    /// Ends the calls peers opened to this rank that it did not choose for its messages (the chosen ones end once
    /// their writer has written everything, <see cref="StreamSender.DisposeAsync"/>): a call left open would break, not
    /// end, when this rank's connections close.
    /// </summary>
    public Task CloseServedAsync() => Task.WhenAll(_served.Where(served => !served.Chosen).Select(served => served.CloseAsync().AsTask()));

    /// <summary>A thread waiting for this rank reads its connections itself, so a message needs no wake-up.</summary>
    public void Poll() => GrpcStream.PollAll(_polled);

    public bool Delivering
    {
        get
        {
            foreach (var call in _polled)
            {
                if (call.ReadingLargePiece) return true;
            }
            return false;
        }
    }

    public void Sleeping()
    {
        // Each connection's own thread reads it while nobody polls.
        foreach (var call in _polled) call.PollingStopped();
    }

    /// <summary>A socket's data is its reader thread's to take: a waiting thread does not sleep on it.</summary>
    public bool SleepOn(Completion completion) => false;

    /// <summary>
    /// The peer's side of a stream ended. A broken message, a frame that is not one, or a break between two ranks
    /// that talk through the gateways aborts the rank; a direct stream that breaks between messages only fails the
    /// synchronous sends awaiting an acknowledgement there (the peer may simply have finished).
    /// </summary>
    private void Ended(InboundStream stream, RpcException? error)
    {
        var pair = stream.Pair;
        lock (_polledLock) _polled = _polled.Remove(pair.Stream);
        int source = pair.Peer;
        bool gateway = peers.BreakAborts(source);
        if (error is null && stream.InsideMessage)
            error = new RpcException(new RpcStatus(StatusCode.Aborted, $"Rank {source} disconnected in the middle of a message of {stream.MessageLength} bytes to rank {identity.Rank}."));
        if (error is not null)
        {
            var detail = gateway ? $" (between {peers.Describe(source)}; {(pair is DialedStream ? $"rank {identity.Rank}'s call to rank {source}" : $"the call rank {source} opened")} broke)" : $", {pair.Way}";
            var failure = new MpiException(ErrorClass.Transport, $"Transport from rank {source} to rank {identity.Rank} failed{detail}: {StatusText.Of(error)}", error);
            pair.Writer.FailAwaitingAcks(failure);
            if (stream.Violated || stream.InsideMessage || gateway) engine.Abort(failure);
        }
        stream.Dispose();
        switch (pair)
        {
            case ServedStream served:
                served.PeerEnded(sendingHere: peers.Withdraw(served), error);
                break;
            case DialedStream dialed:
                dialed.PeerEnded();
                break;
        }
    }

    /// <summary>
    /// The frames one peer sends on one stream: reassembles its messages, one at a time, into buffers (or
    /// the arrays their receives end in), and passes acknowledgements of this rank's synchronous sends to the
    /// stream's writer. A large frame's payload is read from the socket straight to its place in the message.
    /// </summary>
    private sealed class InboundStream(InboundStreams inbound, MatchingEngine engine, int rank, PairStream pair) : IGrpcStreamSink, IDisposable
    {
        private readonly int _source = pair.Peer;
        private DataHeader _header;
        private IncomingBuffer? _buffer; // the message being reassembled
        private int _received;
        private byte[]? _whole; // a large frame shaped otherwise, read whole
        private int _wholeLength;

        public PairStream Pair => pair;

        /// <summary>The peer broke the protocol (this reader threw).</summary>
        public bool Violated { get; private set; }

        /// <summary>Part of a message has arrived, not all of it.</summary>
        public bool InsideMessage => _buffer is not null;

        public long MessageLength => _header.TotalLength;

        public void OnMessage(ReadOnlySequence<byte> message)
        {
            try
            {
                Handle(message);
            }
            catch (RpcException)
            {
                Violated = true;
                throw;
            }
        }

        public Memory<byte> OnMessageStart(ReadOnlyMemory<byte> head, int length)
        {
            try
            {
                var kind = FrameCodec.ReadHead(head, length, out var header, out int payloadStart);
                if (kind == Frame.BodyOneofCase.None)
                {
                    // Another frame, or one shaped otherwise: read whole, then parsed as any small frame is.
                    _whole = ArrayPool<byte>.Shared.Rent(length);
                    _wholeLength = length;
                    head.Span.CopyTo(_whole);
                    return _whole.AsMemory(head.Length, length - head.Length);
                }
                int inHead = head.Length - payloadStart;
                var destination = Accept(kind, header, length - payloadStart);
                head.Span[payloadStart..].CopyTo(destination.Span);
                return destination[inHead..];
            }
            catch (RpcException)
            {
                Violated = true;
                throw;
            }
        }

        public void OnMessageEnd()
        {
            if (_whole is { } whole)
            {
                _whole = null;
                try
                {
                    OnMessage(new ReadOnlySequence<byte>(whole, 0, _wholeLength));
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(whole);
                }
            }
            else if (_received == _header.TotalLength) Deliver();
        }

        public void OnEnd(RpcException? error) => inbound.Ended(this, error);

        public void Dispose()
        {
            _buffer?.Return();
            _buffer = null;
            if (_whole is { } whole) ArrayPool<byte>.Shared.Return(whole);
            _whole = null;
        }

        private void Handle(ReadOnlySequence<byte> bytes)
        {
            var kind = FrameCodec.Read(bytes, out var header, out var payload, out var other);
            if (kind == Frame.BodyOneofCase.Ack)
            {
                // An acknowledgement is a frame of its own and may fall between the frames of a message.
                pair.Writer.Acknowledge(other!.Ack.Sequence);
                return;
            }
            payload.CopyTo(Accept(kind, header, payload.Length).Span);
            if (_received == _header.TotalLength) Deliver();
        }

        /// <summary>
        /// Takes the Data or Chunk frame of <paramref name="kind"/>, whose payload has <paramref name="length"/> bytes,
        /// into the message being reassembled (a Data frame starts one), and says where in it the payload goes.
        /// </summary>
        private Memory<byte> Accept(Frame.BodyOneofCase kind, DataHeader header, long length)
        {
            switch (kind)
            {
                case Frame.BodyOneofCase.Data when _buffer is null:
                    Start(header);
                    break;
                case Frame.BodyOneofCase.Chunk when _buffer is not null:
                    break;
                default:
                    throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Unexpected {kind} frame from rank {_source}{(_buffer is null ? "" : " inside a message")}."));
            }
            if (_received + length > _header.TotalLength)
                throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Rank {_source} sent more than the {_header.TotalLength} bytes it announced (tag {_header.Tag}) to rank {rank}."));
            var destination = _buffer!.Value.Bytes.Slice(_received, (int)length);
            _received += (int)length;
            return destination;
        }

        private void Start(DataHeader header)
        {
            if (header.TotalLength < 0 || header.TotalLength > Array.MaxLength)
                throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Rank {_source} announced a message of {header.TotalLength} bytes to rank {rank}."));
            if (header.TypeCode is < (int)PayloadCode.Byte or > (int)PayloadCode.Fields)
                throw new RpcException(new RpcStatus(StatusCode.InvalidArgument, $"Rank {_source} sent unknown payload type code {header.TypeCode} (tag {header.Tag})."));
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
                header.Synchronous ? new AckReceipt(pair.Writer, header.Sequence) : null));
        }

        private static PayloadType TypeOf(DataHeader header) =>
            new((PayloadCode)header.TypeCode, header.IsArray, header.TypeName.Length == 0 ? null : header.TypeName);
    }

    /// <summary>Acknowledges a matched synchronous send on the stream it came from, the other way.</summary>
    private sealed class AckReceipt(StreamSender writer, ulong sequence) : IDeliveryReceipt
    {
        // The receiving rank must not wait on its peer; a dead stream fails the sender by itself.
        public void Delivered() => writer.PostAck(sequence);

        public void Failed(MpiException error)
        {
            // The receiver is aborting; the sender learns it from the job's abort.
        }
    }
}
