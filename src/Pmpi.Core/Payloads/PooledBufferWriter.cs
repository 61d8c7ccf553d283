using System.Buffers;

namespace Pmpi.Payloads;

/// <summary>An <see cref="IBufferWriter{T}"/> over arrays rented from the shared pool, so serializing allocates nothing per message.</summary>
internal sealed class PooledBufferWriter : IBufferWriter<byte>, IDisposable
{
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(256);
    private int _written;

    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _written);

    public void Advance(int count) => _written += count;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    /// <summary>Hands the rented array to the caller, who returns it to the pool.</summary>
    public byte[] Detach()
    {
        var buffer = _buffer;
        _buffer = [];
        return buffer;
    }

    public void Dispose()
    {
        if (_buffer.Length > 0) ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = [];
    }

    private void Ensure(int sizeHint)
    {
        if (_buffer.Length - _written >= Math.Max(sizeHint, 1)) return;
        var larger = ArrayPool<byte>.Shared.Rent(Math.Max(_buffer.Length * 2, _written + sizeHint));
        _buffer.AsSpan(0, _written).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = larger;
    }
}
