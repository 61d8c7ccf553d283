using System.Buffers;
using System.Collections.Concurrent;
using Microsoft.AspNetCore.Connections;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>
/// Kestrel's buffers in 64 KB blocks instead of its default 4 KB: the socket transport reads at most one block per
/// receive call, so a megabyte arriving on a stream took 256 receive calls (and as many pipe segments); now it takes 16.
/// Blocks are pinned (sockets hand them to the kernel) and reused.
/// </summary>
internal sealed class LargeBlockMemoryPool : MemoryPool<byte>
{
    /// <summary>The size of every block.</summary>
    public const int BlockSize = 64 * 1024;

    private readonly ConcurrentQueue<Block> _free = new();

    public override int MaxBufferSize => BlockSize;

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        return _free.TryDequeue(out var block) ? block : new Block(this);
    }

    protected override void Dispose(bool disposing) => _free.Clear();

    /// <summary>One block; disposing it returns it to the pool.</summary>
    private sealed class Block(LargeBlockMemoryPool pool) : IMemoryOwner<byte>
    {
        private readonly byte[] _array = GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true);

        public Memory<byte> Memory => _array;

        public void Dispose() => pool._free.Enqueue(this);
    }

    /// <summary>Gives Kestrel (through dependency injection) a <see cref="LargeBlockMemoryPool"/> wherever it asks for a pool.</summary>
    public sealed class Factory : IMemoryPoolFactory<byte>
    {
        public MemoryPool<byte> Create(MemoryPoolOptions? options) => new LargeBlockMemoryPool();
    }
}
