using System.Buffers.Binary;
using System.Net.Security;
using System.Net.Sockets;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// The socket under a connection's <see cref="SslStream"/>. It hands the SslStream at most one TLS record per read,
/// so that once a read of the SslStream returns (into a buffer that holds a record's plaintext), the SslStream keeps
/// nothing back: every byte not yet decrypted is here or in the socket, where a thread that polls can see whether a
/// whole record has arrived (<see cref="HasWholeRecord"/>) and read it without waiting. Without it SslStream reads
/// ahead into a buffer of its own, and a poll that looks only at the socket would miss what sits there.
/// </summary>
internal sealed class TlsRecordStream(Socket socket) : Stream
{
    private const int HeaderSize = 5; // content type, version, length (RFC 8446 §5.1)

    // Holds several of the largest records (2^14 bytes of plaintext, at most 2048 more once protected).
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start, _end;
    private int _recordLeft; // bytes of the record being handed out that are still to hand out
    private volatile int _socketReads;

    /// <summary>Bytes read from the socket and not yet handed to the SslStream (read from any thread: a hint).</summary>
    public int Buffered => Volatile.Read(ref _end) - Volatile.Read(ref _start);

    /// <summary>How many reads this stream has made from its socket (as <see cref="Http2FrameReader.TransportReads"/>).</summary>
    public int SocketReads => _socketReads;

    /// <summary>
    /// Whether a whole record has arrived and none is half handed out, so a read of the SslStream returns without
    /// waiting on the network. Takes what the socket holds first, as <paramref name="socketBytes"/> says, without
    /// waiting; the reading thread's alone.
    /// </summary>
    public bool HasWholeRecord(SocketBytes socketBytes)
    {
        if (_recordLeft > 0) return false;
        if (socketBytes == SocketBytes.Waiting || socketBytes == SocketBytes.Unknown && socket.Available > 0)
        {
            Compact();
            if (_end < _buffer.Length) _end += Receive(_buffer.AsSpan(_end));
        }
        return _end - _start >= HeaderSize && _end - _start >= HeaderSize + RecordLength();
    }

    public override int Read(Span<byte> destination)
    {
        if (destination.IsEmpty) return 0;
        if (_recordLeft == 0)
        {
            while (_end - _start < HeaderSize)
            {
                if (Fill()) continue;
                if (_end == _start) return 0;
                _recordLeft = _end - _start; // the peer closed inside a header: the SslStream reports it
                break;
            }
            if (_recordLeft == 0) _recordLeft = HeaderSize + RecordLength();
        }
        if (_start == _end)
        {
            // The rest of a large record goes straight from the socket to the SslStream.
            int read = Receive(destination[..Math.Min(destination.Length, _recordLeft)]);
            _recordLeft -= read;
            return read;
        }
        int take = Math.Min(Math.Min(destination.Length, _recordLeft), _end - _start);
        _buffer.AsSpan(_start, take).CopyTo(destination);
        _start += take;
        _recordLeft -= take;
        return take;
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> source)
    {
        try
        {
            while (!source.IsEmpty) source = source[socket.Send(source)..];
        }
        catch (SocketException e)
        {
            throw new IOException($"Unable to write data to the transport connection: {e.Message}", e);
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Flush()
    {
        // Every write is sent before it returns.
    }

    public override bool CanRead => true;
    public override bool CanWrite => true;
    public override bool CanSeek => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing) socket.Dispose();
        base.Dispose(disposing);
    }

    private int RecordLength() => BinaryPrimitives.ReadUInt16BigEndian(_buffer.AsSpan(_start + 3, 2));

    /// <summary>Reads what the socket gives (waiting for at least a byte) after what is buffered; false at its end.</summary>
    private bool Fill()
    {
        Compact();
        int read = Receive(_buffer.AsSpan(_end));
        _end += read;
        return read > 0;
    }

    /// <summary>Moves what is buffered to the front, so the rest of the buffer is free.</summary>
    private void Compact()
    {
        if (_start == 0) return;
        _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
        _end -= _start;
        _start = 0;
    }

    private int Receive(Span<byte> destination)
    {
        try
        {
            int read = socket.Receive(destination);
            _socketReads++;
            return read;
        }
        catch (SocketException e)
        {
            throw new IOException($"Unable to read data from the transport connection: {e.Message}", e);
        }
    }
}
