using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Immutable;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Streams;

/// <summary>What hears a <see cref="GrpcStream"/>'s incoming side, on its connection's reader thread.</summary>
public interface IGrpcStreamReceiver
{
    /// <summary>
    /// One gRPC message, whose bytes are valid only during the call. Must not block: the connection's other calls
    /// and its flow control wait meanwhile. Throw an <see cref="RpcException"/> to end the call with that status.
    /// </summary>
    void OnMessage(ReadOnlySequence<byte> message);

    /// <summary>
    /// The incoming side ended, once per call: null when the peer ended it cleanly (a server's OK status, or a
    /// client's end of requests), else why the call failed (its status, a reset, a broken connection).
    /// </summary>
    void OnEnd(RpcException? error);
}

/// <summary>
/// A receiver that takes a large message's bytes straight from the socket into memory of its own choosing, rather
/// than out of a buffer the connection filled first: the copy of every large message saved.
/// </summary>
public interface IGrpcStreamSink : IGrpcStreamReceiver
{
    /// <summary>
    /// A message of <paramref name="length"/> bytes, more than <see cref="GrpcStream.HeadSize"/>, begins:
    /// <paramref name="head"/> holds its first <see cref="GrpcStream.HeadSize"/> bytes, valid only during the call.
    /// Returns where its other bytes go, exactly <paramref name="length"/> minus the head's length of them. On the
    /// connection's reader thread; throw an <see cref="RpcException"/> to end the call with that status.
    /// </summary>
    Memory<byte> OnMessageStart(ReadOnlyMemory<byte> head, int length);

    /// <summary>The message begun last has arrived whole.</summary>
    void OnMessageEnd();
}

/// <summary>
/// A gRPC duplex call on PMPI's own HTTP/2 connection (<see cref="GrpcStreamListener"/> serves them, <see cref="DialAsync"/>
/// opens one): messages are written on the caller's thread, straight to the socket, and read on the connection's
/// thread into an <see cref="IGrpcStreamReceiver"/>. For long-lived streams of many messages, where a hop between
/// threads per message is most of the cost; the wire is plain gRPC over HTTP/2 (h2c, or TLS with ALPN h2).
/// </summary>
public sealed class GrpcStream : IDisposable
{
    private readonly Http2Connection _connection;

    internal GrpcStream(Http2Connection connection, int id, int receiveWindow, int maxMessageSize)
    {
        _connection = connection;
        Id = id;
        ReceiveWindow = ReceiveTarget = receiveWindow;
        MaxMessageSize = maxMessageSize;
    }

    /// <summary>How much of a large message a <see cref="IGrpcStreamSink"/> is shown before it says where the rest goes.</summary>
    public const int HeadSize = 1024;

    /// <summary>The remote end's address, for errors and logs.</summary>
    public string Peer => _connection.Peer;

    /// <summary>
    /// Opens a call to <paramref name="path"/> at <paramref name="address"/> on a connection of its own: http for h2c,
    /// https for TLS under <paramref name="security"/>. Nothing is read until <see cref="Start"/>.
    /// </summary>
    /// <exception cref="RpcException">UNAVAILABLE: the address cannot be reached, or the TLS handshake failed.</exception>
    public static Task<GrpcStream> DialAsync(Uri address, string path, RpcSecurity security, IEnumerable<KeyValuePair<string, string>>? headers = null, CancellationToken cancellationToken = default) =>
        GrpcStreamDialer.DialAsync(address, path, security, headers ?? [], relay: null, cancellationToken);

    /// <summary>
    /// Opens a call to <paramref name="path"/> at <paramref name="address"/> through <paramref name="gateway"/>: a TCP
    /// connection to the gateway's port that starts with <paramref name="preamble"/>; once the gateway answered OK,
    /// the same TLS (to <paramref name="address"/>'s certificate, under <paramref name="security"/>) and HTTP/2 as
    /// <see cref="DialAsync(Uri, string, RpcSecurity, IEnumerable{KeyValuePair{string, string}}?, CancellationToken)"/>,
    /// which the gateways relay as opaque bytes.
    /// </summary>
    /// <exception cref="RpcException">The gateway refused the stream (its status and reason), or UNAVAILABLE as a direct dial.</exception>
    public static Task<GrpcStream> DialThroughAsync(Uri gateway, RelayPreamble preamble, Uri address, string path, RpcSecurity security, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(gateway);
        ArgumentNullException.ThrowIfNull(preamble);
        return GrpcStreamDialer.DialAsync(address, path, security, [], (gateway, preamble), cancellationToken);
    }

    /// <summary>
    /// Starts reading a dialed call's responses into <paramref name="receiver"/>; call it once the call's first
    /// message is written (until then the connection speaks with HTTP/2's default frame size and windows).
    /// </summary>
    public void Start(IGrpcStreamReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        if (Receiver is not null) throw new InvalidOperationException("The stream is already being read.");
        if (ServedHere) throw new InvalidOperationException("A served call's receiver is the one its admission gave.");
        Receiver = receiver;
        _connection.StartReading();
    }

    /// <summary>
    /// Writes one message: <paramref name="head"/> and then <paramref name="payload"/> as one gRPC message. Blocks
    /// while the peer's windows are full. Callers write one message at a time.
    /// </summary>
    /// <exception cref="RpcException">The call or its connection has ended.</exception>
    public void Write(ReadOnlySpan<byte> head, ReadOnlySpan<byte> payload) => _connection.WriteMessage(this, head, payload);

    /// <summary>Writes one protobuf message.</summary>
    public void Write(IMessage message) => Write(message.ToByteArray(), []);

    /// <summary>
    /// Writes one small message only if that cannot block (for a receiver, which must not): false leaves it to the
    /// caller to write later.
    /// </summary>
    public bool TryWriteNow(ReadOnlySpan<byte> message) => _connection.TryWriteMessageNow(this, message);

    /// <summary>
    /// Reads what has arrived on the call's connection on the calling thread, unless another thread is reading it,
    /// handing messages to the receivers there: for a thread that spins while it waits for a message, which then
    /// needs no wake-up. Plaintext connections only; never blocks for long (at most for the rest of a frame).
    /// </summary>
    public void Poll() => _connection.Readers.Poll();

    /// <summary><see cref="Poll"/> of several calls, whose connections are asked with one system call (<see cref="Http2Readers.PollAll"/>).</summary>
    public static void PollAll(ImmutableArray<GrpcStream> calls) => Http2Readers.PollAll(calls);

    /// <summary>The connection the call runs on.</summary>
    internal Http2Connection Connection => _connection;

    /// <summary>Whether a thread is reading a large piece of a message from the call's connection (<see cref="Http2Connection.ReadingLargePiece"/>).</summary>
    public bool ReadingLargePiece => _connection.ReadingLargePiece;

    /// <summary>The thread that polled is about to block: the connection's own thread reads it again at once.</summary>
    public void PollingStopped() => _connection.Readers.PollingStopped();

    /// <summary>
    /// Ends this side of the call: a client's end of requests, or a server's OK status; the peer's side may go on.
    /// With <paramref name="error"/>, the call fails instead: a server ends it with that status, a client cancels it.
    /// </summary>
    /// <exception cref="RpcException">The call or its connection has ended already.</exception>
    public void Complete(RpcException? error = null)
    {
        if (IsServer) _connection.EndResponses(this, error);
        else _connection.EndRequests(this, error);
    }

    /// <summary>A dialed call closes its connection; a served one is left to its connection.</summary>
    public void Dispose()
    {
        if (!IsServer) _connection.Dispose();
    }

    private bool IsServer => ServedHere;

    /// <summary>
    /// Reads <paramref name="length"/> bytes of the call's DATA from <paramref name="frames"/>, cutting them into gRPC
    /// messages: read whole into a pooled buffer, or for a sink's large message, its head and then the rest straight
    /// into the sink's memory. On whichever thread reads the connection.
    /// </summary>
    internal void ReceiveData(Http2FrameReader frames, int length)
    {
        Consumed = 0;
        while (Consumed < length)
        {
            int left = length - Consumed;
            if (InSink)
            {
                if (HeadRead < HeadSize)
                {
                    int take = Math.Min(HeadSize - HeadRead, left);
                    frames.ReadExactly(Head.AsSpan(HeadRead, take));
                    Consumed += take;
                    HeadRead += take;
                    if (HeadRead < HeadSize) return;
                    var sink = (IGrpcStreamSink)Receiver!;
                    Body = sink.OnMessageStart(Head, MessageLength);
                    BodyRead = 0;
                    if (Body.Length != MessageLength - HeadSize)
                        throw new InvalidOperationException($"A sink gave {Body.Length} bytes for a message's {MessageLength - HeadSize}.");
                }
                else
                {
                    int take = Math.Min(Body.Length - BodyRead, left);
                    frames.ReadExactly(Body.Span.Slice(BodyRead, take));
                    Consumed += take;
                    BodyRead += take;
                }
                if (HeadRead == HeadSize && BodyRead == Body.Length)
                {
                    InSink = false;
                    Body = default;
                    ((IGrpcStreamSink)Receiver!).OnMessageEnd();
                }
            }
            else if (Message is null)
            {
                int take = Math.Min(5 - PrefixRead, left);
                frames.ReadExactly(Prefix.AsSpan(PrefixRead, take));
                Consumed += take;
                PrefixRead += take;
                if (PrefixRead < 5) return;
                PrefixRead = 0;
                if (Prefix[0] != 0) throw new RpcException(new Status(StatusCode.Unimplemented, "A compressed message: PMPI calls are not compressed."));
                uint size = BinaryPrimitives.ReadUInt32BigEndian(Prefix.AsSpan(1));
                if (size > MaxMessageSize)
                    throw new RpcException(new Status(StatusCode.ResourceExhausted, Receiver is null
                        ? $"A call's first message may be at most {MaxMessageSize} bytes (it is read before the call is admitted); this one has {size}."
                        : $"A message of {size} bytes, over the call's limit of {MaxMessageSize}."));
                MessageLength = (int)size;
                if (size > HeadSize && Receiver is IGrpcStreamSink)
                {
                    InSink = true;
                    HeadRead = 0;
                    continue;
                }
                Message = ArrayPool<byte>.Shared.Rent((int)size);
                MessageRead = 0;
            }
            else
            {
                int take = Math.Min(MessageLength - MessageRead, left);
                frames.ReadExactly(Message.AsSpan(MessageRead, take));
                Consumed += take;
                MessageRead += take;
            }
            if (Message is { } message && MessageRead == MessageLength)
            {
                Message = null;
                try
                {
                    _connection.Deliver(this, new ReadOnlySequence<byte>(message, 0, MessageLength));
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(message);
                }
            }
        }
    }

    // The connection's bookkeeping: send window under its window lock, the rest its reader's (or under its stream lock).
    internal int Id { get; }
    internal bool ServedHere { get; init; }
    internal IGrpcStreamReceiver? Receiver { get; set; }
    internal long SendWindow { get; set; }
    internal long ReceiveWindow { get; set; }
    internal long ReceiveTarget { get; set; }
    internal long ReceiveUnacknowledged { get; set; }
    internal int MaxMessageSize { get; set; }
    internal bool ResponseStarted { get; set; } // a server sent its response headers; a client received them
    internal bool RemoteEnded { get; set; }
    internal bool LocalEnded { get; set; }
    internal RpcException? Ended { get; set; } // why the call failed, once it has
    internal byte[] Prefix { get; } = new byte[5];
    internal int PrefixRead { get; set; }
    internal byte[]? Message { get; set; } // a message read whole
    internal byte[] Head { get; } = new byte[HeadSize]; // a large message's head, for a sink
    internal int HeadRead { get; set; }
    internal Memory<byte> Body { get; set; } // where a sink put the rest of the message
    internal int BodyRead { get; set; }
    internal bool InSink { get; set; } // reading a message into a sink
    internal int MessageLength { get; set; }
    internal int MessageRead { get; set; }
    internal int Consumed { get; set; } // of the DATA frame being read
}
