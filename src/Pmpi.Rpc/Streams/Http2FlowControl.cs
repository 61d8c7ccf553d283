namespace Pmpi.Rpc.Streams;

/// <summary>
/// Flow control of what a connection sends: its send window and each stream's (<see cref="GrpcStream.SendWindow"/>),
/// which writers take from and the peer's WINDOW_UPDATE and SETTINGS give back to, and the peer's largest frame.
/// Writers wait here (Monitor on <see cref="_windows"/>) while a window is empty; an ended call or a failed
/// connection wakes them (<see cref="WakeWriters"/>).
/// </summary>
internal sealed class Http2OutputFlowControl(Http2Connection connection)
{
    private readonly object _windows = new();
    private long _sendWindow = Http2Frame.DefaultWindow;
    private int _peerInitialWindow = Http2Frame.DefaultWindow;
    private volatile int _peerMaxFrameSize = Http2Frame.DefaultFrameSize;

    /// <summary>Gives a new stream the send window the peer's settings give every stream.</summary>
    public void Open(GrpcStream stream)
    {
        lock (_windows) stream.SendWindow = _peerInitialWindow;
    }

    /// <summary>Takes up to <paramref name="wanted"/> bytes of both send windows (and the peer's frame size), waiting while either is empty.</summary>
    public int Reserve(GrpcStream stream, int wanted)
    {
        lock (_windows)
        {
            while (true)
            {
                connection.ThrowIfEnded(stream);
                long room = Math.Min(Math.Min(_sendWindow, stream.SendWindow), Math.Min(wanted, _peerMaxFrameSize));
                if (room > 0)
                {
                    _sendWindow -= room;
                    stream.SendWindow -= room;
                    return (int)room;
                }
                Monitor.Wait(_windows);
            }
        }
    }

    /// <summary>Takes exactly <paramref name="wanted"/> bytes of both windows if they have them, else none.</summary>
    public int TryReserve(GrpcStream stream, int wanted)
    {
        lock (_windows)
        {
            if (Math.Min(_sendWindow, stream.SendWindow) < wanted) return 0;
            _sendWindow -= wanted;
            stream.SendWindow -= wanted;
            return wanted;
        }
    }

    /// <summary>
    /// Takes exactly <paramref name="wanted"/> bytes of both windows and enters <paramref name="writeLock"/>, both or
    /// neither: none if the connection failed, a window is short, or another thread holds the lock.
    /// </summary>
    public bool TryReserveAndEnter(GrpcStream stream, int wanted, Lock writeLock)
    {
        lock (_windows)
        {
            if (connection.Failure is not null || _sendWindow < wanted || stream.SendWindow < wanted) return false;
            if (!writeLock.TryEnter()) return false;
            _sendWindow -= wanted;
            stream.SendWindow -= wanted;
            return true;
        }
    }

    /// <summary>Gives back bytes taken and then not sent.</summary>
    public void Release(GrpcStream stream, int taken)
    {
        lock (_windows)
        {
            _sendWindow += taken;
            stream.SendWindow += taken;
        }
    }

    /// <summary>
    /// The peer's SETTINGS_INITIAL_WINDOW_SIZE is now <paramref name="value"/>: every open stream's window moves by
    /// the change (<paramref name="streams"/>: the connection's, locked on itself).
    /// </summary>
    public void ChangeInitialWindow(int value, Dictionary<int, GrpcStream> streams)
    {
        lock (_windows)
        {
            int delta = value - _peerInitialWindow;
            _peerInitialWindow = value;
            lock (streams)
                foreach (var stream in streams.Values) stream.SendWindow += delta;
            Monitor.PulseAll(_windows);
        }
    }

    /// <summary>The peer's SETTINGS_MAX_FRAME_SIZE.</summary>
    public void ChangeMaxFrameSize(int value) => _peerMaxFrameSize = value;

    /// <summary>A WINDOW_UPDATE: on stream 0 the connection's window, else the stream's if it is still open.</summary>
    public void OnWindowUpdate(int streamId, int increment)
    {
        lock (_windows)
        {
            if (streamId == 0)
            {
                _sendWindow += increment;
                if (_sendWindow > Http2Frame.MaxWindow) throw new Http2ProtocolException(Http2Error.FlowControlError, "The connection's window grew past 2^31-1.");
            }
            else if (connection.Find(streamId) is { } stream) stream.SendWindow += increment;
            Monitor.PulseAll(_windows);
        }
    }

    /// <summary>Wakes the writers waiting for a window, to see whether their call or the connection has ended.</summary>
    public void WakeWriters()
    {
        lock (_windows) Monitor.PulseAll(_windows);
    }
}

/// <summary>
/// The connection's receive window, as the peer sees it: DATA takes from it, and once half its target is read and
/// not yet acknowledged, a WINDOW_UPDATE gives that back. The reading thread's alone (before the reader starts, the
/// handshake's); a field of the connection, so the reader's DATA path reaches it without another object.
/// </summary>
internal struct Http2InputFlowControl()
{
    private long _window = Http2Frame.DefaultWindow;
    private long _target = Http2Frame.DefaultWindow;
    private long _unacknowledged;

    /// <summary>A DATA frame of <paramref name="length"/> bytes, padding included, has arrived.</summary>
    public void Take(int length)
    {
        if (length > _window) throw new Http2ProtocolException(Http2Error.FlowControlError, $"{length} bytes of DATA beyond the connection's window of {_window}.");
        _window -= length;
        _unacknowledged += length;
    }

    /// <summary>What a WINDOW_UPDATE should give back now (taken as given), or 0 while under half the target.</summary>
    public long TakeAcknowledgement()
    {
        if (_unacknowledged < _target / 2) return 0;
        long increment = _unacknowledged;
        _window += increment;
        _unacknowledged = 0;
        return increment;
    }

    /// <summary>Grows the window to <paramref name="target"/>: the increment to send (taken as sent), or 0 if it is that large already.</summary>
    public long GrowTo(long target)
    {
        long increment = target - _target;
        if (increment <= 0) return 0;
        _target = target;
        _window += increment;
        return increment;
    }
}
