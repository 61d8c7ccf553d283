using System.Buffers;
using System.Runtime.InteropServices;

namespace Pmpi.Payloads;

/// <summary>
/// The bytes of an array of unmanaged elements as memory, without copying: a send reads the sender's array in place,
/// and a link writes a received message straight into the array the receive returns.
/// </summary>
internal sealed class ArrayBytes(Array array, int byteLength) : MemoryManager<byte>
{
    private GCHandle _pin;

    public override Span<byte> GetSpan() => MemoryMarshal.CreateSpan(ref MemoryMarshal.GetArrayDataReference(array), byteLength);

    public override unsafe MemoryHandle Pin(int elementIndex = 0)
    {
        if (!_pin.IsAllocated) _pin = GCHandle.Alloc(array, GCHandleType.Pinned);
        return new MemoryHandle((byte*)_pin.AddrOfPinnedObject() + elementIndex, default, this);
    }

    public override void Unpin()
    {
        if (_pin.IsAllocated) _pin.Free();
    }

    protected override void Dispose(bool disposing) => Unpin();
}
