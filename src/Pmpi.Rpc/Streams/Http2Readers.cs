using System.Collections.Immutable;
using System.Net.Sockets;
using Grpc.Core;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// Who reads an <see cref="Http2Connection"/>'s frames, one at a time under the read lock: its reader thread, or a
/// thread that waits for a message and reads instead (<see cref="Poll"/>, <see cref="PollAll"/>), which then costs no
/// wake-up. The reader thread waits in poll(2) without taking bytes, and stands aside while a thread polls.
/// </summary>
internal sealed class Http2Readers(Http2Connection connection, Http2FrameReader frames, Socket socket, Stream transport, TlsRecordStream? records)
{
    private readonly Http2Connection _connection = connection;
    private readonly Http2FrameReader _frames = frames;
    private readonly Socket _socket = socket;
    private readonly Stream _transport = transport;
    private readonly TlsRecordStream? _records = records; // under _transport when it is TLS
    private volatile bool _peerSettled; // the peer's first SETTINGS has been read
    private readonly Lock _readLock = new(); // whoever reads frames: the reader thread, or a thread polling
    private volatile Thread? _readingThread;
    private Thread? _thread;
    private readonly object _pollers = new(); // where the reader thread waits while a thread polls
    private long _polledTicks = long.MinValue / 2; // when a thread last polled

    /// <summary>
    /// How long after a thread last polled the reader thread leaves the connection to polling threads (ms): it sleeps
    /// that long, then looks again, and while a thread keeps polling, twice as long each time, up to
    /// <see cref="MaxPollerSlice"/>. A polling thread that stops without saying so (its wait completed) costs the
    /// connection at most a slice.
    /// </summary>
    private const int PollerGrace = 2;

    /// <summary>
    /// The longest the reader thread sleeps while a thread polls (ms). Each look is a wake-up on the core of the rank,
    /// which polls there: at 2 ms slices a ping-pong's reader woke 800 times a second at 25 µs each
    /// (docs/bench-log/2026-12-01-ranks-waiting-on-the-network.md).
    /// </summary>
    private const int MaxPollerSlice = 16;

    /// <summary>
    /// Whether a waiting thread may read this connection (<see cref="Poll"/>): plaintext, or TLS once the peer's
    /// first SETTINGS has been read. Before that a TLS 1.3 server's session tickets may come, records that a read of
    /// the SslStream takes and then waits past for data.
    /// </summary>
    private bool Pollable => _records is null ? _transport is NetworkStream : _peerSettled;

    /// <summary>
    /// Whether a whole TLS record waits (in the socket, looked at as <paramref name="socketBytes"/> says, or under the
    /// SslStream), which this end may read without waiting on the network. The reading thread's alone.
    /// </summary>
    private bool RecordArrived(SocketBytes socketBytes) => _records is not null && Pollable && _records.HasWholeRecord(socketBytes);

    /// <summary>How many reads this end has made from its socket: through the SslStream's record stream, or for plaintext the frame reader's.</summary>
    private int SocketReads => _records?.SocketReads ?? _frames.TransportReads;

    /// <summary>The peer's first SETTINGS has been read: a TLS connection may be polled from now on.</summary>
    public void PeerSettled() => _peerSettled = true;

    /// <summary>The reader thread once started, else null.</summary>
    public Thread? Thread => Volatile.Read(ref _thread);

    /// <summary>Whether the calling thread is the one reading frames now (which must never block on a write).</summary>
    public bool IsReadingThread => System.Threading.Thread.CurrentThread == _readingThread;

    /// <summary>Starts the reader thread.</summary>
    public void Start()
    {
        var reader = new Thread(Run) { IsBackground = true, Name = $"PMPI HTTP/2 {_connection.Peer}" };
        reader.Start();
        // Known only once started: a Dispose on another thread joins it, which an unstarted thread refuses.
        Volatile.Write(ref _thread, reader);
    }

    private void Run()
    {
        Exception failure;
        try
        {
            lock (_readLock)
            {
                if (_connection.IsServer)
                {
                    Span<byte> preface = stackalloc byte[Http2Frame.Preface.Length];
                    if (!_frames.TryReadExactly(preface) || !preface.SequenceEqual(Http2Frame.Preface))
                        throw new Http2ProtocolException(Http2Error.ProtocolError, "The connection did not open with the HTTP/2 preface (PMPI endpoints speak HTTP/2 only).");
                }
            }
            int slice = PollerGrace;
            while (true)
            {
                if (Pollable && !_frames.Buffered())
                {
                    // While a thread polls, it reads what arrives, and this one keeps out of its way rather than wake
                    // with every message (on a busy node each wake-up takes a core from someone). Looked at under the
                    // lock that PollingStopped pulses, so a poller that stops meanwhile is not missed for a slice.
                    lock (_pollers)
                    {
                        if (System.Environment.TickCount64 - Volatile.Read(ref _polledTicks) < PollerGrace)
                        {
                            Monitor.Wait(_pollers, slice);
                            slice = Math.Min(2 * slice, MaxPollerSlice);
                            continue;
                        }
                    }
                    slice = PollerGrace;
                    // Waits for bytes without taking them, so that a thread polling may still read them first.
                    _socket.Poll(-1, SelectMode.SelectRead);
                }
                lock (_readLock)
                {
                    // What woke this thread may have been read already by a polling one; readable with nothing to
                    // read is the end of the connection, which the read reports.
                    bool mustRead = !Pollable || _frames.Buffered() || _socket.Available > 0 || _socket.Poll(0, SelectMode.SelectRead);
                    if (mustRead && !ReadArrived(atLeastOne: true)) break;
                }
            }
            failure = new RpcException(new Status(StatusCode.Unavailable, $"{_connection.Peer} closed the connection."));
        }
        catch (Exception e)
        {
            if (e is Http2ProtocolException protocol) _connection.TryGoAway(protocol);
            failure = e;
        }
        _connection.Fail(failure);
    }

    /// <summary>
    /// Reads what has arrived on the calling thread, if no other thread is reading: for a thread that waits for a
    /// message and would otherwise be woken by the reader thread. Over TLS it reads only whole records, so it never
    /// waits on the network for the rest of one (<see cref="TlsRecordStream"/>).
    /// </summary>
    public void Poll()
    {
        if (!Polling()) return;
        try
        {
            int reads = SocketReads;
            if (_frames.Buffered()) ReadIfFree(readsWhenSeen: null);
            else if (_socket.Available > 0) ReadIfFree(reads);
        }
        catch (Exception e)
        {
            _connection.Failed(e);
        }
    }

    /// <summary>
    /// <see cref="Poll"/> for many connections, asking the kernel about all their sockets in one poll(2)
    /// (`Socket.Select`) rather than one system call each: a rank's waiting thread polls every peer's
    /// connection each time round, and a call costs about 0.7 µs here, so 16 peers took 10 µs a round where one
    /// Select takes 2–4.
    /// </summary>
    /// <param name="calls">A rank's calls, in an order that does not change during the call.</param>
    public static void PollAll(ImmutableArray<GrpcStream> calls)
    {
        // A rank whose peers are all on its node polls this with none, millions of times a second.
        if (calls.IsEmpty) return;
        if (calls.Length == 1)
        {
            calls[0].Connection.Readers.Poll();
            return;
        }
        // Per thread: a rank may have several threads waiting at once.
        var asked = t_asked ??= [];
        var ready = t_ready ??= [];
        var reads = t_reads ??= [];
        asked.Clear();
        ready.Clear();
        reads.Clear();
        foreach (var call in calls)
        {
            var readers = call.Connection.Readers;
            if (!readers.Polling()) continue;
            if (readers._frames.Buffered()) readers.ReadIfFree(readsWhenSeen: null);
            else
            {
                asked.Add(readers);
                ready.Add(readers._socket);
                reads.Add(readers.SocketReads);
            }
        }
        if (ready.Count == 0) return;
        try
        {
            Socket.Select(ready, null, null, 0);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // A connection closed meanwhile: each is asked on its own, and the closed one fails as its Poll would.
            foreach (var readers in asked) readers.Poll();
            return;
        }
        // Select keeps the readable sockets, in the order they were given.
        int next = 0;
        for (int i = 0; i < asked.Count; i++)
        {
            if (next < ready.Count && ready[next] == asked[i]._socket)
            {
                next++;
                asked[i].ReadIfFree(reads[i]);
            }
        }
    }

    [ThreadStatic] private static List<Http2Readers>? t_asked;
    [ThreadStatic] private static List<Socket>? t_ready;
    [ThreadStatic] private static List<int>? t_reads;

    /// <summary>Whether a waiting thread may read this connection now; if so, notes that one polls.</summary>
    private bool Polling()
    {
        if (!Pollable || _connection.Failure is not null) return false;
        Volatile.Write(ref _polledTicks, System.Environment.TickCount64);
        return true;
    }

    /// <summary>
    /// Reads what has arrived unless another thread is reading; the end of the connection is left to the reader
    /// thread, which sees it too. The caller saw bytes in the socket when this end had read it
    /// <paramref name="readsWhenSeen"/> times (null: it found bytes in this end's buffers): if it still has, they are
    /// there, and are read without asking the kernel again (a system call costs as much as the rest of a small
    /// message's reading here).
    /// </summary>
    private void ReadIfFree(int? readsWhenSeen)
    {
        try
        {
            if (!_readLock.TryEnter()) return;
            try
            {
                var socketBytes = readsWhenSeen == SocketReads ? SocketBytes.Waiting : SocketBytes.Unknown;
                ReadArrived(atLeastOne: _records is null && socketBytes == SocketBytes.Waiting, socketBytes);
            }
            finally
            {
                _readLock.Exit();
            }
        }
        catch (Exception e)
        {
            _connection.Failed(e);
        }
    }

    /// <summary>The thread that polled stops (it is about to block): the reader thread reads again at once.</summary>
    public void PollingStopped()
    {
        Volatile.Write(ref _polledTicks, long.MinValue / 2);
        lock (_pollers) Monitor.PulseAll(_pollers);
    }

    /// <summary>
    /// Reads frames while any are buffered or, over TLS, a whole record has arrived, the socket looked at first as
    /// <paramref name="socketBytes"/> says (and with <paramref name="atLeastOne"/>, one frame in any case, waiting for
    /// it); false at the end of the connection. Bytes left in the socket after the first frame are for the next poll,
    /// which finds them as cheaply as asking here would.
    /// </summary>
    private bool ReadArrived(bool atLeastOne, SocketBytes socketBytes = SocketBytes.Unasked)
    {
        _readingThread = System.Threading.Thread.CurrentThread;
        try
        {
            Span<byte> header = stackalloc byte[Http2Frame.HeaderSize];
            while (atLeastOne || _frames.HasBufferedBytes || RecordArrived(socketBytes))
            {
                atLeastOne = false;
                socketBytes = SocketBytes.Unasked;
                if (!_frames.TryReadExactly(header)) return false;
                var (length, type, flags, streamId) = Http2Frame.ReadHeader(header);
                if (length > Http2Frame.MaxFrameSize) throw new Http2ProtocolException(Http2Error.FrameSizeError, $"A frame of {length} bytes.");
                _connection.OnFrame(length, type, flags, streamId);
            }
            return true;
        }
        finally
        {
            _readingThread = null;
        }
    }
}
