namespace Pmpi.Gateway.Internal;

/// <summary>
/// One connection's bytes carried by an HTTP/2 call: reads come from one body, writes go to the other (each flushed,
/// since a TLS record or HTTP/2 frame of the connection inside must not wait in a buffer). Disposing it cancels the
/// read and write in progress and ends the call once they have returned: Kestrel hands a finished call's bodies to the
/// next call on its connection, so a read left pending would take that call's request.
/// </summary>
internal sealed class TunnelStream(Stream incoming, Stream outgoing, Action ended) : Stream
{
    private readonly CancellationTokenSource _closing = new();
    private Task _reading = Task.CompletedTask;
    private Task _writing = Task.CompletedTask;
    private int _disposed;

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        var reading = incoming.ReadAsync(buffer, either.Token).AsTask();
        _reading = reading;
        return await reading.ConfigureAwait(false);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count, default).GetAwaiter().GetResult();

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        var writing = WriteAndFlushAsync(buffer, either.Token);
        _writing = writing;
        await writing.ConfigureAwait(false);
    }

    private async Task WriteAndFlushAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        await outgoing.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
        await outgoing.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer, offset, count, default).GetAwaiter().GetResult();

    public override Task FlushAsync(CancellationToken cancellationToken) => outgoing.FlushAsync(cancellationToken);

    public override void Flush() => outgoing.Flush();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
        await _closing.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_reading, _writing).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _closing.Dispose();
        ended();
        GC.SuppressFinalize(this);
    }

    protected override void Dispose(bool disposing)
    {
        // HttpClient disposes the connections it dialed through a tunnel synchronously: the call ends once the
        // cancelled read and write have returned, a moment later.
        if (disposing) _ = DisposeAsync().AsTask();
        base.Dispose(disposing);
    }
}
