using System.Diagnostics;
using System.Net.Sockets;
using Grpc.Core;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// The reading side of an <see cref="Http2Connection"/>'s transport: its read buffer, and the header blocks of
/// HEADERS and CONTINUATION frames, gathered and decoded. Whoever holds the connection's read lock uses it
/// (the reader thread, or a thread polling), one thread at a time.
/// </summary>
internal sealed class Http2FrameReader(Socket socket, Stream transport, TlsRecordStream? records, string peer)
{
    /// <summary>The most a header block may take (HEADERS plus CONTINUATION frames); gRPC's are a few hundred bytes.</summary>
    public const int MaxHeaderBlock = 16 * 1024;

    /// <summary>
    /// How long a thread reading the rest of a frame waits for it by polling the socket before it sleeps in the read:
    /// the rest is on its way, and each sleep costs a wake-up on both ends, as many as one per 64 KB of a large frame.
    /// </summary>
    private static readonly long MidFrameSpinTicks = Stopwatch.Frequency / 5_000; // 200 µs

    private readonly byte[] _readBuffer = new byte[64 * 1024];
    private int _readStart, _readEnd;
    private volatile int _transportReads;
    private volatile bool _readingLargePiece;
    private readonly HpackDecoder _decoder = new();
    private readonly List<(string Name, string Value)> _headers = [];
    private readonly byte[] _headerBlock = new byte[MaxHeaderBlock];

    /// <summary>Whether bytes wait in this end's own buffers (or, for TLS, a record under the SslStream).</summary>
    public bool Buffered() => _readStart < _readEnd || records is { Buffered: > 0 };

    /// <summary>
    /// How many reads this end has made from its transport: a thread that saw bytes in the socket, and then finds this
    /// count unchanged under the read lock, knows they are still there to read.
    /// </summary>
    public int TransportReads => _transportReads;

    /// <summary>Whether bytes wait in the read buffer itself.</summary>
    public bool HasBufferedBytes => _readStart < _readEnd;

    /// <summary>
    /// Whether a thread is reading a large piece of a frame from the socket, and may wait there for the rest: a thread
    /// that polls meanwhile finds nothing to read and only takes the core that one copies on.
    /// </summary>
    public bool ReadingLargePiece => _readingLargePiece;

    public bool TryReadExactly(Span<byte> destination)
    {
        if (_readStart == _readEnd && !Fill()) return false;
        ReadExactly(destination);
        return true;
    }

    public void ReadExactly(Span<byte> destination)
    {
        while (destination.Length > 0)
        {
            int buffered = _readEnd - _readStart;
            if (buffered == 0)
            {
                // A large read goes straight into its destination, past the buffer.
                if (destination.Length >= _readBuffer.Length)
                {
                    _readingLargePiece = true;
                    int read;
                    try
                    {
                        AwaitMoreOfFrame();
                        read = transport.Read(destination);
                        _transportReads++;
                    }
                    finally
                    {
                        _readingLargePiece = false;
                    }
                    if (read == 0) throw new RpcException(new Status(StatusCode.Unavailable, $"{peer} closed the connection inside a frame."));
                    destination = destination[read..];
                    continue;
                }
                AwaitMoreOfFrame();
                if (!Fill()) throw new RpcException(new Status(StatusCode.Unavailable, $"{peer} closed the connection inside a frame."));
                buffered = _readEnd - _readStart;
            }
            int take = Math.Min(buffered, destination.Length);
            _readBuffer.AsSpan(_readStart, take).CopyTo(destination);
            _readStart += take;
            destination = destination[take..];
        }
    }

    /// <summary>Polls a plaintext socket for the rest of a frame a while (<see cref="MidFrameSpinTicks"/>), so that the read finds bytes rather than sleeps.</summary>
    private void AwaitMoreOfFrame()
    {
        if (records is not null) return; // a TLS record's bytes may sit in the SslStream, out of the socket's sight
        long start = Stopwatch.GetTimestamp();
        var spinner = new SpinWait();
        while (socket.Available == 0 && Stopwatch.GetTimestamp() - start < MidFrameSpinTicks) spinner.SpinOnce(sleep1Threshold: -1);
    }

    public byte ReadByte()
    {
        Span<byte> one = stackalloc byte[1];
        ReadExactly(one);
        return one[0];
    }

    public void Skip(int length)
    {
        Span<byte> sink = stackalloc byte[256];
        while (length > 0)
        {
            int take = Math.Min(length, sink.Length);
            ReadExactly(sink[..take]);
            length -= take;
        }
    }

    private bool Fill()
    {
        _readStart = 0;
        _readEnd = transport.Read(_readBuffer);
        _transportReads++;
        return _readEnd > 0;
    }

    /// <summary>
    /// Reads a header block, the rest of a HEADERS frame and any CONTINUATION frames after it, and decodes it; its
    /// fields are then <see cref="Header"/>'s. Decoded always, to keep the dynamic table in step.
    /// </summary>
    public void ReadHeaderBlock(int length, byte flags, int streamId)
    {
        int padding = 0;
        if ((flags & Http2Frame.Padded) != 0)
        {
            padding = ReadByte();
            length--;
        }
        if ((flags & Http2Frame.Priority) != 0)
        {
            Skip(5);
            length -= 5;
        }
        if (length - padding < 0) throw new Http2ProtocolException(Http2Error.ProtocolError, "HEADERS padding longer than the frame.");
        int block = ReadBlockPart(0, length - padding);
        Skip(padding);
        Span<byte> header = stackalloc byte[Http2Frame.HeaderSize];
        while ((flags & Http2Frame.EndHeaders) == 0)
        {
            ReadExactly(header);
            (length, var type, flags, int continued) = Http2Frame.ReadHeader(header);
            if (type != Http2FrameType.Continuation || continued != streamId) throw new Http2ProtocolException(Http2Error.ProtocolError, "A header block interrupted by another frame.");
            block = ReadBlockPart(block, length);
        }
        _headers.Clear();
        _decoder.Decode(_headerBlock.AsSpan(0, block), _headers);
    }

    private int ReadBlockPart(int at, int length)
    {
        if (at + length > MaxHeaderBlock) throw new Http2ProtocolException(Http2Error.EnhanceYourCalm, $"A header block over {MaxHeaderBlock} bytes.");
        ReadExactly(_headerBlock.AsSpan(at, length));
        return at + length;
    }

    /// <summary>A field of the header block read last, or null.</summary>
    public string? Header(string name)
    {
        foreach (var (key, value) in _headers)
            if (key == name) return value;
        return null;
    }
}
