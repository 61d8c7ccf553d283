using System.Buffers.Binary;
using System.Net.Sockets;
using Grpc.Core;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// The writing side of an <see cref="Http2Connection"/>: writers write on their own threads, one frame at a time
/// under the write lock, straight to the socket; what the reading thread sends is queued (<see cref="Post"/>).
/// </summary>
/// <remarks>
/// Whoever reads never blocks on a write: if it had to, two ends each sending bulk data while their readers wait to
/// send a WINDOW_UPDATE to one another would deadlock. What the reader sends (SETTINGS and PING acknowledgements,
/// window updates, refusals) is queued and written by whoever next holds the write lock, by the reader itself if the
/// lock is free and the socket has room, or else from the thread pool.
/// </remarks>
internal sealed class Http2FrameWriter(Http2Connection connection, Socket socket, Stream transport, bool plaintext, Http2OutputFlowControl flow)
{
    private const int WriteBufferSize = 64 * 1024;

    private readonly Lock _writeLock = new(); // one frame at a time
    private readonly byte[] _writeBuffer = new byte[WriteBufferSize];
    private readonly Queue<byte[]> _control = new(); // frames from the reader waiting for the write lock (locked on itself)
    private volatile bool _controlPending;
    private int _flushScheduled;

    /// <summary>Writes the preface (a client's), this end's SETTINGS, and a client's first connection WINDOW_UPDATE.</summary>
    public void WriteHandshake(bool preface, List<(Http2Setting, int)> settings, long windowIncrement)
    {
        var frame = new byte[Http2Frame.HeaderSize + 6 * settings.Count];
        Http2Frame.WriteHeader(frame, 6 * settings.Count, Http2FrameType.Settings, 0, 0);
        for (int i = 0; i < settings.Count; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(Http2Frame.HeaderSize + 6 * i), (ushort)settings[i].Item1);
            BinaryPrimitives.WriteInt32BigEndian(frame.AsSpan(Http2Frame.HeaderSize + 6 * i + 2), settings[i].Item2);
        }
        lock (_writeLock)
        {
            if (preface) transport.Write(Http2Frame.Preface);
            transport.Write(frame);
            if (windowIncrement > 0) transport.Write(WindowUpdate(0, windowIncrement));
        }
    }

    /// <summary>Half-closes the socket after everything written (never inside a frame: under the write lock); false if the lock stayed taken for <paramref name="wait"/>.</summary>
    public bool TryShutdownSend(TimeSpan wait)
    {
        if (!_writeLock.TryEnter(wait)) return false;
        try
        {
            socket.Shutdown(SocketShutdown.Send);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
        finally
        {
            _writeLock.Exit();
        }
        return true;
    }

    /// <summary>
    /// Writes one gRPC message (<paramref name="head"/> then <paramref name="payload"/>) on
    /// <paramref name="stream"/>, as DATA frames as large as the peer allows and the windows admit, waiting for window
    /// updates as needed; a frame with a large payload after padding frames that shift it (<see cref="ShiftPadding"/>).
    /// Callers write a stream's messages one at a time; other streams' frames may fall between.
    /// </summary>
    public void WriteMessage(GrpcStream stream, ReadOnlySpan<byte> head, ReadOnlySpan<byte> payload)
    {
        int total = 5 + head.Length + payload.Length;
        if (total - 5 > RpcOptions.DefaultMaxMessageSize) throw new RpcException(new Status(StatusCode.ResourceExhausted, $"A message of {total - 5} bytes is over the {RpcOptions.DefaultMaxMessageSize}-byte limit."));
        Span<byte> prefix = stackalloc byte[5];
        prefix[0] = 0;
        BinaryPrimitives.WriteInt32BigEndian(prefix[1..], total - 5);
        Span<byte> frameHeader = stackalloc byte[Http2Frame.HeaderSize];
        for (int sent = 0; sent < total;)
        {
            int length = flow.Reserve(stream, total - sent);
            int end = sent + length;
            var payloadPart = Part(payload, 5 + head.Length, sent, end);
            // Through TLS the bytes the kernel copies are records, not these frames.
            int padding = plaintext && payloadPart.Length >= ShiftedPayload
                ? flow.TryReserve(stream, ShiftPadding(Http2Frame.HeaderSize + length - payloadPart.Length, payloadPart))
                : 0;
            lock (_writeLock)
            {
                connection.ThrowIfEnded(stream);
                try
                {
                    WriteControlLocked();
                    var buffered = new WriteBatch(transport, _writeBuffer);
                    WritePadding(ref buffered, stream.Id, padding);
                    Http2Frame.WriteHeader(frameHeader, length, Http2FrameType.Data, 0, stream.Id);
                    buffered.Add(frameHeader);
                    buffered.Add(Part(prefix, 0, sent, end));
                    buffered.Add(Part(head, 5, sent, end));
                    buffered.Add(payloadPart);
                    buffered.Flush();
                }
                catch (Exception e) when (e is IOException or ObjectDisposedException)
                {
                    connection.Fail(e);
                    throw connection.Unavailable(e);
                }
            }
            sent += length;
            FlushControlAfterWrite();
        }

        static ReadOnlySpan<byte> Part(ReadOnlySpan<byte> piece, int at, int from, int to)
        {
            int start = Math.Clamp(from - at, 0, piece.Length), stop = Math.Clamp(to - at, 0, piece.Length);
            return piece[start..stop];
        }
    }

    /// <summary>The smallest payload of a frame that padding shifts in the kernel's socket pages (<see cref="ShiftPadding"/>).</summary>
    private const int ShiftedPayload = 64 * 1024;

    private const int PageSize = 4096;

    /// <summary>An empty padded DATA frame: its header, its pad length byte, and up to 255 bytes of padding.</summary>
    private const int MinPaddingFrame = Http2Frame.HeaderSize + 1, MaxPaddingFrame = MinPaddingFrame + byte.MaxValue;

    /// <summary>
    /// The bytes of padding frames that put <paramref name="payload"/>, which follows <paramref name="before"/> bytes of
    /// its frame, half a page from its own offset in a page once the kernel has copied it into its socket's pages. The
    /// kernel copies a write after the bytes written before it, in pages that start afresh once the peer has read them.
    /// On the x86 machines measured, a copy (the sender's into those pages, the receiver's out of them) runs at half
    /// speed or less for some placements of its destination a few dozen bytes from its source modulo 4 KB, and the
    /// headers before a payload put a large array's payload there at its usual offsets
    /// (docs/bench-log/2026-11-28-large-payload-place-in-socket-pages.md, A large payload's place in the socket's
    /// pages). Half a page is as far from its source as a copy's destination can be: the sender's always, the
    /// receiver's when its array lies in its page as the sender's does.
    /// </summary>
    private static unsafe int ShiftPadding(int before, ReadOnlySpan<byte> payload)
    {
        long address;
        fixed (byte* start = payload) address = (long)start;
        int padding = (int)((address - before - PageSize / 2) & (PageSize - 1));
        return padding is > 0 and < MinPaddingFrame ? padding + PageSize : padding;
    }

    /// <summary>Writes <paramref name="bytes"/> (none, or at least <see cref="MinPaddingFrame"/>) of empty padded DATA frames on a stream.</summary>
    private static void WritePadding(ref WriteBatch buffered, int streamId, int bytes)
    {
        Span<byte> frame = stackalloc byte[MaxPaddingFrame];
        frame.Clear();
        while (bytes > 0)
        {
            int size = Math.Min(bytes, MaxPaddingFrame);
            if (bytes - size is > 0 and < MinPaddingFrame) size = bytes - MinPaddingFrame;
            Http2Frame.WriteHeader(frame, size - Http2Frame.HeaderSize, Http2FrameType.Data, Http2Frame.Padded, streamId);
            frame[Http2Frame.HeaderSize] = (byte)(size - MinPaddingFrame);
            buffered.Add(frame[..size]);
            bytes -= size;
        }
    }

    /// <summary>
    /// Writes a small gRPC message at once if that cannot block: the windows have room, no other frame is being
    /// written, and the socket takes more. For the reader thread, which must never wait on a write.
    /// </summary>
    public bool TryWriteMessageNow(GrpcStream stream, ReadOnlySpan<byte> message)
    {
        int total = 5 + message.Length;
        if (total > Http2Frame.DefaultFrameSize) return false;
        if (!flow.TryReserveAndEnter(stream, total, _writeLock)) return false;
        try
        {
            if (!socket.Poll(0, SelectMode.SelectWrite) || stream.Ended is not null)
            {
                flow.Release(stream, total);
                return false;
            }
            WriteControlLocked();
            Span<byte> frame = stackalloc byte[Http2Frame.HeaderSize + 5];
            Http2Frame.WriteHeader(frame, total, Http2FrameType.Data, 0, stream.Id);
            frame[Http2Frame.HeaderSize] = 0;
            BinaryPrimitives.WriteInt32BigEndian(frame[(Http2Frame.HeaderSize + 1)..], message.Length);
            var buffered = new WriteBatch(transport, _writeBuffer);
            buffered.Add(frame);
            buffered.Add(message);
            buffered.Flush();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            connection.Fail(e);
        }
        finally
        {
            _writeLock.Exit();
        }
        FlushControlAfterWrite();
        return true;
    }

    /// <summary>Ends this side of a client's call: an empty DATA frame with END_STREAM, or RST_STREAM (CANCEL) when it failed.</summary>
    public void WriteEndOfRequests(GrpcStream stream, bool failed) =>
        WriteEnd(stream, failed ? Reset(stream.Id, Http2Error.Cancel) : Frame(Http2FrameType.Data, Http2Frame.EndStream, stream.Id, []));

    /// <summary>Ends a server's call with trailers: grpc-status, and grpc-message unless OK.</summary>
    public void WriteTrailers(GrpcStream stream, StatusCode status, string message) =>
        WriteEnd(stream, HeadersFrame(stream.Id, Trailers(status, message, stream.ResponseStarted), endStream: true));

    private void WriteEnd(GrpcStream stream, byte[] frame)
    {
        // The reader (a receiver ending its call) must not block on a write: its frame goes through the queue, which
        // every writer empties before its next frame, so it still follows the call's earlier frames.
        if (connection.Readers.IsReadingThread)
        {
            connection.ThrowIfEnded(stream);
            Post(frame);
            return;
        }
        lock (_writeLock)
        {
            connection.ThrowIfEnded(stream);
            try
            {
                WriteControlLocked();
                transport.Write(frame);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                connection.Fail(e);
                throw connection.Unavailable(e);
            }
        }
        FlushControlAfterWrite();
    }

    /// <summary>Writes a header block in one HEADERS frame, unless the connection has failed.</summary>
    public void WriteHeaders(int streamId, List<byte> block, bool endStream)
    {
        lock (_writeLock)
        {
            if (connection.Failure is { } failure) throw connection.Unavailable(failure);
            WriteControlLocked();
            try
            {
                transport.Write(HeadersFrame(streamId, block, endStream));
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                connection.Fail(e);
                throw connection.Unavailable(e);
            }
        }
        FlushControlAfterWrite();
    }

    private static byte[] HeadersFrame(int streamId, List<byte> block, bool endStream)
    {
        // Every block PMPI writes is far below the 16 KB any peer accepts in one frame.
        var frame = new byte[Http2Frame.HeaderSize + block.Count];
        Http2Frame.WriteHeader(frame, block.Count, Http2FrameType.Headers, (byte)(Http2Frame.EndHeaders | (endStream ? Http2Frame.EndStream : 0)), streamId);
        block.CopyTo(frame, Http2Frame.HeaderSize);
        return frame;
    }

    private static List<byte> ResponseHeaders()
    {
        var block = new List<byte>();
        HpackEncoder.Write(block, ":status", "200");
        HpackEncoder.Write(block, "content-type", "application/grpc");
        return block;
    }

    private static List<byte> Trailers(StatusCode status, string message, bool headersSent)
    {
        // A call refused before any response is trailers-only: the status rides with the response headers.
        var block = headersSent ? [] : ResponseHeaders();
        HpackEncoder.Write(block, "grpc-status", ((int)status).ToString(System.Globalization.CultureInfo.InvariantCulture));
        if (status != StatusCode.OK && message.Length > 0) HpackEncoder.Write(block, "grpc-message", Uri.EscapeDataString(message));
        return block;
    }

    // ---- Frames from the reader (or the watch timer), queued ----

    public void PostResponseHeaders(int streamId) => Post(HeadersFrame(streamId, ResponseHeaders(), endStream: false));

    public void PostTrailers(GrpcStream stream, StatusCode status, string message) =>
        Post(HeadersFrame(stream.Id, Trailers(status, message, stream.ResponseStarted), endStream: true));

    public void PostReset(int streamId, Http2Error code) => Post(Reset(streamId, code));

    public void PostWindowUpdate(int streamId, long increment) => Post(WindowUpdate(streamId, increment));

    public void PostSettingsAcknowledgement() => Post(Frame(Http2FrameType.Settings, Http2Frame.Ack, 0, []));

    public void PostPing(byte flags, ReadOnlySpan<byte> opaque) => Post(Frame(Http2FrameType.Ping, flags, 0, opaque));

    public void PostGoAway(int lastStream, Http2Error code)
    {
        Span<byte> payload = stackalloc byte[8];
        BinaryPrimitives.WriteInt32BigEndian(payload, lastStream);
        BinaryPrimitives.WriteUInt32BigEndian(payload[4..], (uint)code);
        Post(Frame(Http2FrameType.GoAway, 0, 0, payload));
    }

    /// <summary>Queues a frame from the reader (or the watch timer) and writes it if that cannot block.</summary>
    private void Post(byte[] frame)
    {
        lock (_control)
        {
            _control.Enqueue(frame);
            _controlPending = true;
        }
        FlushControl(mayBlock: false);
    }

    private void FlushControlAfterWrite()
    {
        // A frame posted while this writer held the lock, after it had written the queue: no one else saw it.
        if (_controlPending) FlushControl(mayBlock: true);
    }

    private void FlushControl(bool mayBlock)
    {
        while (_controlPending && connection.Failure is null)
        {
            if (!_writeLock.TryEnter()) return; // its holder writes the queue before its next frame and after its last
            try
            {
                if (!mayBlock && !socket.Poll(0, SelectMode.SelectWrite))
                {
                    if (Interlocked.Exchange(ref _flushScheduled, 1) == 0)
                        ThreadPool.UnsafeQueueUserWorkItem(static writer =>
                        {
                            Volatile.Write(ref writer._flushScheduled, 0);
                            writer.FlushControl(mayBlock: true);
                        }, this, preferLocal: false);
                    return;
                }
                WriteControlLocked();
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException or RpcException)
            {
                connection.Fail(e);
                return;
            }
            finally
            {
                _writeLock.Exit();
            }
        }
    }

    private void WriteControlLocked()
    {
        if (!_controlPending) return;
        while (true)
        {
            byte[] frame;
            lock (_control)
            {
                if (!_control.TryDequeue(out frame!))
                {
                    _controlPending = false;
                    return;
                }
            }
            try
            {
                transport.Write(frame);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                connection.Fail(e);
                throw connection.Unavailable(e);
            }
        }
    }

    private static byte[] Frame(Http2FrameType type, byte flags, int streamId, ReadOnlySpan<byte> payload)
    {
        var frame = new byte[Http2Frame.HeaderSize + payload.Length];
        Http2Frame.WriteHeader(frame, payload.Length, type, flags, streamId);
        payload.CopyTo(frame.AsSpan(Http2Frame.HeaderSize));
        return frame;
    }

    private static byte[] WindowUpdate(int streamId, long increment)
    {
        Span<byte> payload = stackalloc byte[4];
        BinaryPrimitives.WriteInt32BigEndian(payload, (int)increment);
        return Frame(Http2FrameType.WindowUpdate, 0, streamId, payload);
    }

    private static byte[] Reset(int streamId, Http2Error code)
    {
        Span<byte> payload = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(payload, (uint)code);
        return Frame(Http2FrameType.RstStream, 0, streamId, payload);
    }

    /// <summary>
    /// Gathers small pieces of a frame into one write; a large piece goes to the socket from where it is, after as
    /// much of its start as ends the gathered write on a page boundary. The kernel copies each write into its socket
    /// pages after the bytes written before it, so the large piece's bulk then lands page-aligned there, which this
    /// machine kind copies far faster (docs/bench-log/2026-11-28-network-1mb-message-by-message.md, Network 1 MB,
    /// message by message).
    /// </summary>
    private ref struct WriteBatch(Stream transport, byte[] buffer)
    {
        private int _used; // the buffer's length is a multiple of PageSize

        public void Add(scoped ReadOnlySpan<byte> piece)
        {
            if (piece.Length > buffer.Length - _used)
            {
                if (piece.Length > buffer.Length / 2)
                {
                    int toPage = -_used & (PageSize - 1);
                    piece[..toPage].CopyTo(buffer.AsSpan(_used));
                    _used += toPage;
                    Flush();
                    transport.Write(piece[toPage..]);
                    return;
                }
                Flush();
            }
            piece.CopyTo(buffer.AsSpan(_used));
            _used += piece.Length;
        }

        public void Flush()
        {
            if (_used == 0) return;
            transport.Write(buffer, 0, _used);
            _used = 0;
        }
    }
}
