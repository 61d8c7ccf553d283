using System.Buffers;

namespace Pmpi.Payloads;

/// <summary>
/// Where a payload's bytes are kept while a link sends or receives them: a small payload in a new array, a larger
/// one in an array rented from the shared pool (given back once the message is done with). A rent and its return
/// (the pool's per-thread lookups) cost more than a small array's allocation: out of the pool, broadcasts of 8 B to
/// 4 KB between two ranks of a node ran 20-40 % faster; at 8 KB the two were not separable
/// (docs/bench-log/2026-11-28-small-payloads-and-allgather-into-place.md).
/// </summary>
internal static class PayloadBuffers
{
    /// <summary>From this many bytes a payload's buffer is rented.</summary>
    public const int PooledMinimum = 8192;

    /// <summary>A buffer of at least <paramref name="length"/> bytes; <paramref name="rented"/> is it when it goes back to the pool.</summary>
    public static byte[] Get(int length, out byte[]? rented)
    {
        rented = length >= PooledMinimum ? ArrayPool<byte>.Shared.Rent(length) : null;
        return rented ?? new byte[length];
    }
}
