using System.Buffers;
using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using Grpc.Core;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// One HTTP/2 connection carrying gRPC duplex calls (<see cref="GrpcStream"/>), either end. A thread of its own
/// reads it: frames are parsed straight from the socket, and each complete gRPC message is handed to its stream's
/// receiver on that thread, so a message costs one wake-up between the socket and the application. A thread that
/// waits for a message may read instead (<see cref="Http2Readers.Poll"/>), and then it costs none. Writers write on
/// their own threads, one frame at a time under a lock, straight to the socket (<see cref="Http2FrameWriter"/>,
/// which also queues what the reader sends, so that it never blocks on a write).
/// </summary>
/// <remarks>
/// Split as Kestrel splits its HTTP/2: this class keeps the stream table, the frames' meaning and the connection's
/// life (failure, GOAWAY, the watch); <see cref="Http2FrameReader"/> reads bytes into frames,
/// <see cref="Http2Readers"/> decides which thread does, <see cref="Http2FrameWriter"/> writes frames, and
/// <see cref="Http2OutputFlowControl"/> and <see cref="Http2InputFlowControl"/> keep the windows.
/// </remarks>
internal sealed class Http2Connection : IDisposable
{
    private static readonly TimeSpan CloseGrace = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ShutdownGrace = TimeSpan.FromMilliseconds(250);

    private readonly Socket _socket;
    private readonly Stream _transport;
    private readonly Http2Endpoint _endpoint;

    // The reading thread's alone (whichever holds Http2Readers' read lock).
    private readonly Http2FrameReader _frames;
    private int _lastPeerStream;
    private Http2InputFlowControl _receiveFlow = new(); // a field, not readonly: it changes in place

    private readonly Http2FrameWriter _writer;
    private readonly Http2OutputFlowControl _sendFlow;

    private readonly Dictionary<int, GrpcStream> _streams = []; // locked on itself
    private int _nextStreamId = 1;
    private volatile Exception? _failure;
    private readonly Timer _watch;
    private readonly long _openedTicks = System.Environment.TickCount64;
    private long _lastFrameTicks = System.Environment.TickCount64, _pingSentTicks, _idleSinceTicks = System.Environment.TickCount64;
    private volatile bool _admittedAny;
    private bool _nudged, _refusing; // the watch's alone

    /// <param name="socket">The connection's socket.</param>
    /// <param name="transport">What frames are read from and written to: the socket's stream, or an SslStream over <paramref name="records"/>.</param>
    /// <param name="endpoint">This end's settings and limits.</param>
    /// <param name="records">The stream under a TLS <paramref name="transport"/>, which lets a waiting thread read it too.</param>
    public Http2Connection(Socket socket, Stream transport, Http2Endpoint endpoint, TlsRecordStream? records = null)
    {
        _socket = socket;
        _transport = transport;
        _endpoint = endpoint;
        Peer = socket.RemoteEndPoint?.ToString() ?? "a peer";
        _frames = new Http2FrameReader(socket, transport, records, Peer);
        _sendFlow = new Http2OutputFlowControl(this);
        _writer = new Http2FrameWriter(this, socket, transport, plaintext: records is null, _sendFlow);
        Readers = new Http2Readers(this, _frames, socket, transport, records);
        _watch = new Timer(static state => ((Http2Connection)state!).Watch(), this, Timeout.Infinite, Timeout.Infinite);
    }

    /// <summary>The remote address, for errors and logs.</summary>
    public string Peer { get; }

    internal bool IsServer => _endpoint.Admit is not null;

    /// <summary>Who reads the connection: its reader thread, or a thread that polls.</summary>
    internal Http2Readers Readers { get; }

    /// <inheritdoc cref="Http2FrameReader.ReadingLargePiece"/>
    public bool ReadingLargePiece => _frames.ReadingLargePiece;

    /// <summary>
    /// Sends the preface and settings. A client also opens its window to <see cref="Http2Endpoint.ConnectionWindow"/>
    /// at once (it dialed a peer it trusts); a server does so per admitted call.
    /// </summary>
    public void Handshake()
    {
        var settings = new List<(Http2Setting, int)> { (Http2Setting.MaxFrameSize, Http2Frame.MaxFrameSize), (Http2Setting.MaxHeaderListSize, Http2FrameReader.MaxHeaderBlock) };
        if (IsServer) settings.Add((Http2Setting.MaxConcurrentStreams, _endpoint.MaxStreams));
        else settings.AddRange([(Http2Setting.EnablePush, 0), (Http2Setting.InitialWindowSize, _endpoint.StreamWindow)]);
        _writer.WriteHandshake(preface: !IsServer, settings, IsServer ? 0 : _receiveFlow.GrowTo(_endpoint.ConnectionWindow));
    }

    /// <summary>Starts the reader thread, and the watch over the connection's liveness.</summary>
    public void StartReading()
    {
        // A tenth of the shortest deadline watched, so each is kept to within 10 %.
        var interval = (IsServer ? Min(_endpoint.PingDelay, _endpoint.AdmitTimeout) : _endpoint.PingDelay) / 10;
        _watch.Change(interval, interval);
        Readers.Start();

        static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
    }

    /// <summary>Opens a call (a client's): its request headers are written now; the stream then carries the call.</summary>
    public GrpcStream Open(string authority, string scheme, string path, IEnumerable<KeyValuePair<string, string>> headers)
    {
        var block = new List<byte>();
        HpackEncoder.Write(block, ":method", "POST");
        HpackEncoder.Write(block, ":scheme", scheme);
        HpackEncoder.Write(block, ":path", path);
        HpackEncoder.Write(block, ":authority", authority);
        HpackEncoder.Write(block, "content-type", "application/grpc");
        HpackEncoder.Write(block, "te", "trailers");
        foreach (var (name, value) in headers) HpackEncoder.Write(block, name, value);
        GrpcStream stream;
        lock (_streams)
        {
            stream = new GrpcStream(this, _nextStreamId, _endpoint.StreamWindow, _endpoint.MaxMessageSize);
            _nextStreamId += 2;
            _streams.Add(stream.Id, stream);
        }
        _sendFlow.Open(stream);
        _writer.WriteHeaders(stream.Id, block, endStream: false);
        return stream;
    }

    /// <summary>
    /// Closes the connection, failing the calls still open: first a FIN after everything written, and up to
    /// <see cref="ShutdownGrace"/> for the peer to close its side while the reader reads on. Closing a socket that
    /// still holds unread bytes (a late WINDOW_UPDATE, PING or end of stream) sends RST, which drops whatever the
    /// peer has not read yet: a relay (a gateway) would lose this end's last messages and trailers.
    /// </summary>
    public void Dispose()
    {
        if (_failure is null && Readers.Thread is { } reader && reader != Thread.CurrentThread && _writer.TryShutdownSend(ShutdownGrace))
            reader.Join(ShutdownGrace);
        Fail(new RpcException(new Status(StatusCode.Unavailable, $"The connection to {Peer} was closed.")));
    }

    // ---- Writing (Http2FrameWriter) ----

    /// <inheritdoc cref="Http2FrameWriter.WriteMessage"/>
    public void WriteMessage(GrpcStream stream, ReadOnlySpan<byte> head, ReadOnlySpan<byte> payload) => _writer.WriteMessage(stream, head, payload);

    /// <inheritdoc cref="Http2FrameWriter.TryWriteMessageNow"/>
    public bool TryWriteMessageNow(GrpcStream stream, ReadOnlySpan<byte> message) => _writer.TryWriteMessageNow(stream, message);

    /// <summary>
    /// Ends this side of a client's call: an empty DATA frame with END_STREAM, or RST_STREAM (CANCEL) when
    /// <paramref name="error"/> says the call failed.
    /// </summary>
    public void EndRequests(GrpcStream stream, RpcException? error)
    {
        _writer.WriteEndOfRequests(stream, failed: error is not null);
        End(stream, error, remote: error is not null, local: true);
    }

    /// <summary>Ends a server's call with trailers: grpc-status, and grpc-message unless OK.</summary>
    public void EndResponses(GrpcStream stream, RpcException? error)
    {
        _writer.WriteTrailers(stream, error?.StatusCode ?? StatusCode.OK, error?.Status.Detail ?? "");
        // A call failed before the peer ended its side: RST_STREAM tells it to stop sending.
        if (error is not null && !stream.RemoteEnded) _writer.PostReset(stream.Id, Http2Error.NoError);
        End(stream, error, remote: error is not null, local: true);
    }

    /// <summary>Throws if the call or the connection has ended (for a writer: under a lock, so it writes nothing after).</summary>
    internal void ThrowIfEnded(GrpcStream stream)
    {
        if (_failure is { } failure) throw Unavailable(failure);
        if (stream.Ended is { } ended) throw ended;
    }

    /// <summary>Why the connection failed, once it has.</summary>
    internal Exception? Failure => _failure;

    // ---- Frames read (Http2Readers: on whichever thread reads) ----

    /// <summary>Fails the connection for what reading threw; a protocol error tells the peer first (GOAWAY).</summary>
    internal void Failed(Exception e)
    {
        if (e is Http2ProtocolException protocol) TryGoAway(protocol);
        Fail(e);
    }

    /// <summary>Handles a frame whose header has been read, reading the rest of it.</summary>
    internal void OnFrame(int length, Http2FrameType type, byte flags, int streamId)
    {
        Volatile.Write(ref _lastFrameTicks, System.Environment.TickCount64);
        switch (type)
        {
            case Http2FrameType.Data:
                OnData(length, flags, streamId);
                break;
            case Http2FrameType.Headers:
                OnHeaders(length, flags, streamId);
                break;
            case Http2FrameType.RstStream:
                if (length != 4 || streamId == 0) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A RST_STREAM frame of the wrong size or on stream 0.");
                Span<byte> code = stackalloc byte[4];
                _frames.ReadExactly(code);
                if (Find(streamId) is { } reset)
                    End(reset, new RpcException(new Status(StatusCode.Cancelled, $"{Peer} reset the call ({(Http2Error)BinaryPrimitives.ReadUInt32BigEndian(code)}).")), remote: true, local: true);
                break;
            case Http2FrameType.Settings:
                OnSettings(length, flags, streamId);
                break;
            case Http2FrameType.Ping:
                if (length != 8 || streamId != 0) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A PING frame of the wrong size or on a stream.");
                Span<byte> opaque = stackalloc byte[8];
                _frames.ReadExactly(opaque);
                if ((flags & Http2Frame.Ack) == 0) _writer.PostPing(Http2Frame.Ack, opaque);
                else Volatile.Write(ref _pingSentTicks, 0);
                break;
            case Http2FrameType.GoAway:
                OnGoAway(length);
                break;
            case Http2FrameType.WindowUpdate:
                OnWindowUpdate(length, streamId);
                break;
            case Http2FrameType.PushPromise:
                throw new Http2ProtocolException(Http2Error.ProtocolError, "A PUSH_PROMISE, which this end disabled.");
            case Http2FrameType.Continuation:
                throw new Http2ProtocolException(Http2Error.ProtocolError, "A CONTINUATION frame outside a header block.");
            default:
                _frames.Skip(length); // PRIORITY and unknown types carry nothing for this end
                break;
        }
    }

    private void OnData(int length, byte flags, int streamId)
    {
        if (streamId == 0) throw new Http2ProtocolException(Http2Error.ProtocolError, "A DATA frame on stream 0.");
        _receiveFlow.Take(length);
        int frameLength = length; // what flow control counts: padding too
        int padding = 0;
        if ((flags & Http2Frame.Padded) != 0)
        {
            if (length < 1) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A padded DATA frame without its pad length.");
            padding = _frames.ReadByte();
            length--;
            if (padding > length) throw new Http2ProtocolException(Http2Error.ProtocolError, "DATA padding longer than the frame.");
            length -= padding;
        }
        var stream = Find(streamId);
        if (stream is null || stream.RemoteEnded)
        {
            if (streamId > (IsServer ? _lastPeerStream : _nextStreamId - 2)) throw new Http2ProtocolException(Http2Error.ProtocolError, $"DATA on stream {streamId}, which was never opened.");
            _frames.Skip(length); // a call that ended (or was refused) this side; its data is dropped
        }
        else
        {
            stream.ReceiveWindow -= frameLength;
            if (stream.ReceiveWindow < 0) throw new Http2ProtocolException(Http2Error.FlowControlError, $"DATA beyond the window of stream {streamId}.");
            stream.ReceiveUnacknowledged += frameLength;
            try
            {
                stream.ReceiveData(_frames, length);
            }
            catch (RpcException e)
            {
                // The call's receiver refused what arrived (or a message was too large): the call ends, the connection stays.
                _frames.Skip(length - stream.Consumed);
                Refuse(stream, e);
            }
            if (!stream.RemoteEnded && stream.ReceiveUnacknowledged >= stream.ReceiveTarget / 2)
            {
                _writer.PostWindowUpdate(streamId, stream.ReceiveUnacknowledged);
                stream.ReceiveWindow += stream.ReceiveUnacknowledged;
                stream.ReceiveUnacknowledged = 0;
            }
        }
        _frames.Skip(padding);
        if (_receiveFlow.TakeAcknowledgement() is > 0 and var acknowledged) _writer.PostWindowUpdate(0, acknowledged);
        if ((flags & Http2Frame.EndStream) != 0 && stream is { RemoteEnded: false }) RemoteEnd(stream);
    }

    /// <summary>A complete message of a call: to its receiver, or if it is a server's call not yet admitted, to admission.</summary>
    internal void Deliver(GrpcStream stream, ReadOnlySequence<byte> message)
    {
        if (stream.Receiver is { } receiver)
        {
            receiver.OnMessage(message);
            return;
        }
        // A server's call, not yet admitted: its first message decides. The response starts first, so that it goes
        // out before anything the admitted call's writers send; a refusal then ends it with trailers.
        stream.ResponseStarted = true;
        _writer.PostResponseHeaders(stream.Id);
        var admitted = _endpoint.Admit!(stream, message);
        stream.MaxMessageSize = _endpoint.MaxMessageSize;
        stream.Receiver = admitted;
        // Now the caller is known, it may send as much as the endpoint's windows allow.
        _writer.PostWindowUpdate(stream.Id, _endpoint.StreamWindow - Http2Frame.DefaultWindow);
        stream.ReceiveWindow += _endpoint.StreamWindow - Http2Frame.DefaultWindow;
        stream.ReceiveTarget = _endpoint.StreamWindow;
        if (!_admittedAny)
        {
            _admittedAny = true;
            if (_receiveFlow.GrowTo(_endpoint.ConnectionWindow) is > 0 and var increment) _writer.PostWindowUpdate(0, increment);
        }
    }

    private void OnHeaders(int length, byte flags, int streamId)
    {
        if (streamId == 0) throw new Http2ProtocolException(Http2Error.ProtocolError, "A HEADERS frame on stream 0.");
        _frames.ReadHeaderBlock(length, flags, streamId);
        bool endStream = (flags & Http2Frame.EndStream) != 0;
        var stream = Find(streamId);
        if (IsServer && stream is null)
        {
            if ((streamId & 1) == 0 || streamId <= _lastPeerStream) throw new Http2ProtocolException(Http2Error.ProtocolError, $"HEADERS opening stream {streamId}, not a new client stream.");
            _lastPeerStream = streamId;
            OnCall(streamId, endStream);
            return;
        }
        if (stream is null) return; // trailers of a call this end already ended
        if (IsServer)
        {
            if (!endStream) throw new Http2ProtocolException(Http2Error.ProtocolError, $"Trailers without END_STREAM on stream {streamId}.");
            RemoteEnd(stream);
            return;
        }
        if (!stream.ResponseStarted)
        {
            stream.ResponseStarted = true; // on a client: the response's headers have arrived
            var status = _frames.Header(":status");
            if (status != "200")
            {
                End(stream, new RpcException(new Status(StatusCode.Unavailable, $"{Peer} answered the call with HTTP status {status ?? "(none)"}.")), remote: true, local: false);
                _writer.PostReset(streamId, Http2Error.Cancel);
                return;
            }
            if (!endStream) return;
        }
        else if (!endStream) throw new Http2ProtocolException(Http2Error.ProtocolError, $"Trailers without END_STREAM on stream {streamId}.");
        // Trailers (or a trailers-only response): the call's outcome.
        var code = _frames.Header("grpc-status");
        var error = code == "0" ? null
            : new RpcException(new Status(int.TryParse(code, out int value) ? (StatusCode)value : StatusCode.Unknown,
                _frames.Header("grpc-message") is { } message ? Uri.UnescapeDataString(message) : $"{Peer} ended the call without a grpc-status."));
        if (error is null) RemoteEnd(stream);
        else End(stream, error, remote: true, local: false);
    }

    /// <summary>A new call on a server: its method must be the endpoint's; the first message then decides (<see cref="Deliver"/>).</summary>
    private void OnCall(int streamId, bool endStream)
    {
        GrpcStream stream;
        lock (_streams)
        {
            if (_streams.Count >= _endpoint.MaxStreams)
            {
                _writer.PostReset(streamId, Http2Error.RefusedStream);
                return;
            }
            stream = new GrpcStream(this, streamId, Http2Frame.DefaultWindow, _endpoint.MaxFirstMessageSize) { ServedHere = true };
            _streams.Add(streamId, stream);
        }
        _sendFlow.Open(stream);
        if (_frames.Header(":method") != "POST" || _frames.Header(":path") != _endpoint.Path)
            Refuse(stream, new RpcException(new Status(StatusCode.Unimplemented, $"{_frames.Header(":method")} {_frames.Header(":path")} is not served here; this endpoint serves {_endpoint.Path}.")));
        else if (_frames.Header("content-type") is not { } type || !type.StartsWith("application/grpc", StringComparison.Ordinal))
            Refuse(stream, new RpcException(new Status(StatusCode.Internal, $"Content-Type '{_frames.Header("content-type")}' is not gRPC's.")));
        else if (endStream)
            Refuse(stream, new RpcException(new Status(StatusCode.InvalidArgument, "The call ended before its first message.")));
    }

    private void OnSettings(int length, byte flags, int streamId)
    {
        if (streamId != 0) throw new Http2ProtocolException(Http2Error.ProtocolError, "SETTINGS on a stream.");
        if ((flags & Http2Frame.Ack) != 0)
        {
            if (length != 0) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A SETTINGS acknowledgement with a payload.");
            return;
        }
        if (length % 6 != 0 || length > 6 * 64) throw new Http2ProtocolException(Http2Error.FrameSizeError, $"A SETTINGS frame of {length} bytes.");
        Span<byte> setting = stackalloc byte[6];
        for (int i = 0; i < length / 6; i++)
        {
            _frames.ReadExactly(setting);
            uint value = BinaryPrimitives.ReadUInt32BigEndian(setting[2..]);
            switch ((Http2Setting)BinaryPrimitives.ReadUInt16BigEndian(setting))
            {
                case Http2Setting.InitialWindowSize:
                    if (value > Http2Frame.MaxWindow) throw new Http2ProtocolException(Http2Error.FlowControlError, $"An initial window of {value}.");
                    _sendFlow.ChangeInitialWindow((int)value, _streams);
                    break;
                case Http2Setting.MaxFrameSize:
                    if (value is < Http2Frame.DefaultFrameSize or > Http2Frame.MaxFrameSize) throw new Http2ProtocolException(Http2Error.ProtocolError, $"A maximum frame size of {value}.");
                    _sendFlow.ChangeMaxFrameSize((int)value);
                    break;
                case Http2Setting.EnablePush when value > 1:
                    throw new Http2ProtocolException(Http2Error.ProtocolError, $"ENABLE_PUSH {value}.");
            }
        }
        _writer.PostSettingsAcknowledgement();
        Readers.PeerSettled();
    }

    private void OnWindowUpdate(int length, int streamId)
    {
        if (length != 4) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A WINDOW_UPDATE of the wrong size.");
        Span<byte> payload = stackalloc byte[4];
        _frames.ReadExactly(payload);
        int increment = BinaryPrimitives.ReadInt32BigEndian(payload) & int.MaxValue;
        if (increment == 0) throw new Http2ProtocolException(Http2Error.ProtocolError, "A WINDOW_UPDATE of 0.");
        _sendFlow.OnWindowUpdate(streamId, increment);
    }

    private void OnGoAway(int length)
    {
        if (length < 8) throw new Http2ProtocolException(Http2Error.FrameSizeError, "A GOAWAY frame under 8 bytes.");
        Span<byte> payload = stackalloc byte[8];
        _frames.ReadExactly(payload);
        int lastStream = BinaryPrimitives.ReadInt32BigEndian(payload) & int.MaxValue;
        var code = (Http2Error)BinaryPrimitives.ReadUInt32BigEndian(payload[4..]);
        var debug = new byte[Math.Min(length - 8, 1024)];
        _frames.ReadExactly(debug);
        _frames.Skip(length - 8 - debug.Length);
        // Calls the peer never took fail now; the others may finish.
        List<GrpcStream> refused;
        lock (_streams) refused = [.. _streams.Values.Where(stream => stream.Id > lastStream)];
        foreach (var stream in refused)
            End(stream, new RpcException(new Status(StatusCode.Unavailable, $"{Peer} is going away ({code}{(debug.Length > 0 ? ": " + Encoding.UTF8.GetString(debug) : "")}).")), remote: true, local: true);
    }

    internal GrpcStream? Find(int streamId)
    {
        lock (_streams) return _streams.GetValueOrDefault(streamId);
    }

    /// <summary>Refuses (or ends with an error) a server's call: trailers with the status, then RST_STREAM so the caller stops sending.</summary>
    private void Refuse(GrpcStream stream, RpcException error)
    {
        bool trailers = IsServer && stream.Ended is null && !stream.LocalEnded, reset = !stream.RemoteEnded;
        // The receiver hears first: once the caller has the refusal, this end has acted on it.
        End(stream, error, remote: true, local: true);
        if (trailers) _writer.PostTrailers(stream, error.StatusCode, error.Status.Detail);
        if (reset) _writer.PostReset(stream.Id, IsServer ? Http2Error.NoError : Http2Error.Cancel);
    }

    /// <summary>A server that admitted no call in time refuses those still waiting (so their callers learn why), then closes.</summary>
    private void RefuseUnadmitted(RpcException error)
    {
        if (_refusing) return;
        _refusing = true;
        List<GrpcStream> waiting;
        lock (_streams) waiting = [.. _streams.Values.Where(stream => stream.Receiver is null)];
        foreach (var stream in waiting) Refuse(stream, error);
        // A moment for the refusals to reach the caller before the socket closes under them.
        _ = Task.Delay(CloseGrace).ContinueWith(_ => Fail(error), TaskScheduler.Default);
    }

    private void RemoteEnd(GrpcStream stream)
    {
        if (stream.Message is not null || stream.PrefixRead > 0 || stream.InSink)
        {
            Refuse(stream, new RpcException(new Status(StatusCode.Internal, "The call ended inside a message.")));
            return;
        }
        if (stream.Receiver is null)
        {
            Refuse(stream, new RpcException(new Status(StatusCode.InvalidArgument, "The call ended before its first message.")));
            return;
        }
        End(stream, null, remote: true, local: false);
    }

    private void LocalEnded(GrpcStream stream) => End(stream, null, remote: false, local: true);

    /// <summary>Marks a side of a call ended; the receiver hears once, when the remote side ends (or the call fails).</summary>
    private void End(GrpcStream stream, RpcException? error, bool remote, bool local)
    {
        bool report = false, remove;
        lock (_streams)
        {
            if (error is not null && stream.Ended is null) stream.Ended = error;
            if (remote && !stream.RemoteEnded)
            {
                stream.RemoteEnded = true;
                report = true;
            }
            if (local) stream.LocalEnded = true;
            remove = stream.RemoteEnded && stream.LocalEnded;
            if (remove)
            {
                _streams.Remove(stream.Id);
                if (_streams.Count == 0) Volatile.Write(ref _idleSinceTicks, System.Environment.TickCount64);
            }
        }
        if (error is not null)
            _sendFlow.WakeWriters();
        if (remove && stream.Message is { } partial)
        {
            stream.Message = null;
            ArrayPool<byte>.Shared.Return(partial);
        }
        if (report) stream.Receiver?.OnEnd(error);
    }

    internal void Fail(Exception cause)
    {
        lock (_streams)
        {
            if (_failure is not null) return;
            _failure = cause;
        }
        _watch.Dispose();
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
        _transport.Dispose();
        _socket.Dispose();
        _sendFlow.WakeWriters();
        List<GrpcStream> open;
        lock (_streams) open = [.. _streams.Values];
        var error = Unavailable(cause);
        foreach (var stream in open) End(stream, error, remote: true, local: true);
        _endpoint.Closed?.Invoke(this);
    }

    internal RpcException Unavailable(Exception cause) => cause as RpcException
        ?? new RpcException(new Status(StatusCode.Unavailable, $"The connection with {Peer} failed: {cause.Message}"));

    internal void TryGoAway(Http2ProtocolException error)
    {
        _writer.PostGoAway(_lastPeerStream, error.Code);
    }

    /// <summary>Every few seconds: pings a connection that has gone quiet and fails one whose ping goes unanswered; a server also closes a connection that never had a call admitted in time, or has had none for its idle timeout.</summary>
    private void Watch()
    {
        if (_failure is not null) return;
        long now = System.Environment.TickCount64;
        long pingSent = Volatile.Read(ref _pingSentTicks);
        if (pingSent != 0 && now - pingSent > _endpoint.PingTimeout.TotalMilliseconds)
        {
            Fail(new RpcException(new Status(StatusCode.Unavailable, $"{Peer} did not answer an HTTP/2 PING within {_endpoint.PingTimeout.TotalSeconds:0} s.")));
            return;
        }
        if (IsServer && !_admittedAny && now - _openedTicks >= _endpoint.AdmitTimeout.TotalMilliseconds)
        {
            RefuseUnadmitted(new RpcException(new Status(StatusCode.DeadlineExceeded, $"A call must send its first message within {_endpoint.AdmitTimeout.TotalSeconds:0} s of connecting, and be admitted; {Peer}'s was not.")));
            return;
        }
        bool idle;
        lock (_streams) idle = _streams.Count == 0;
        if (IsServer && idle && now - Volatile.Read(ref _idleSinceTicks) >= _endpoint.IdleTimeout.TotalMilliseconds)
        {
            Fail(new RpcException(new Status(StatusCode.Unavailable, $"{Peer}'s connection was idle for {_endpoint.IdleTimeout.TotalSeconds:0} s.")));
            return;
        }
        // A client may hold its request headers until it writes the body (SocketsHttpHandler does), and a ping's
        // acknowledgement flushes them: so a caller that sends nothing still has a call to be refused, and learns why.
        bool nudge = IsServer && !_admittedAny && idle && !_nudged && now - _openedTicks >= _endpoint.AdmitTimeout.TotalMilliseconds / 2;
        if (pingSent == 0 && (nudge || now - Volatile.Read(ref _lastFrameTicks) >= _endpoint.PingDelay.TotalMilliseconds))
        {
            _nudged |= nudge;
            Volatile.Write(ref _pingSentTicks, now);
            _writer.PostPing(0, stackalloc byte[8]);
        }
    }
}
