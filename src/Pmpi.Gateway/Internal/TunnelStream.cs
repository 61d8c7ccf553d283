namespace Pmpi.Gateway.Internal;

/// <summary>
/// One connection's bytes carried by an HTTP/2 call: reads come from one body, writes go to the other (each flushed,
/// since a TLS record or HTTP/2 frame of the connection inside must not wait in a buffer). Disposing it ends the call.
/// </summary>
internal sealed class TunnelStream(Stream incoming, Stream outgoing, Action ended) : Stream
{
    private int _disposed;

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => incoming.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        incoming.ReadAsync(buffer, offset, count, cancellationToken);

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count, default).GetAwaiter().GetResult();

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
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

    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0) ended();
        base.Dispose(disposing);
    }
}
