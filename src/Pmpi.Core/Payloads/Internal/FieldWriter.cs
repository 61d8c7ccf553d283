using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace Pmpi.Payloads.Internal;

/// <summary>
/// Writes one message of the field-based format: values inline, each reference object once. An object's body is
/// written after the body that first referred to it (a queue, as BinaryFormatter did), so a linked list of any length
/// costs no stack. Every object is remembered by identity, so a cycle can never loop: without reference preservation
/// an object met twice is an error, with it the second meeting writes the first one's id.
/// </summary>
/// <remarks>
/// The methods run per object here, in <see cref="FieldReader"/> and in the shapes are compiled fully optimised at
/// their first call (AggressiveOptimization): one message of a few hundred objects calls them hundreds of times before
/// tiered compilation would promote them, so a short job would serialize in unoptimised code throughout.
/// </remarks>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class FieldWriter(PooledBufferWriter buffer, bool preserveReferences)
{
    // The identity map of the thread's last message, reused: growing a new one for every message of a few hundred
    // objects cost more than writing them. Kept only while small, since Clear empties all of its buckets.
    [ThreadStatic] private static Dictionary<object, int>? t_spareIds;
    private const int SpareIdsLimit = 1024;

    private readonly Dictionary<object, int> _ids = TakeSpareIds() ?? new(ReferenceEqualityComparer.Instance);
    private readonly Queue<(object Value, ReferenceShape Shape)> _pending = new();

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WriteRaw<T>(T value)
    {
        int size = Unsafe.SizeOf<T>();
        Unsafe.WriteUnaligned(ref MemoryMarshal.GetReference(buffer.GetSpan(size)), value);
        buffer.Advance(size);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WriteBytes(ReadOnlySpan<byte> bytes)
    {
        bytes.CopyTo(buffer.GetSpan(bytes.Length));
        buffer.Advance(bytes.Length);
    }

    /// <summary>A non-negative count as a 7-bit varint.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WriteCount(int value)
    {
        var span = buffer.GetSpan(5);
        int at = 0;
        uint remaining = (uint)value;
        for (; remaining >= 0x80; remaining >>= 7) span[at++] = (byte)(remaining | 0x80);
        span[at++] = (byte)remaining;
        buffer.Advance(at);
    }

    /// <summary>Null as 0, otherwise the UTF-8 length + 1 and the bytes.</summary>
    public void WriteString(string? value)
    {
        if (value is null)
        {
            WriteCount(0);
            return;
        }
        int length = Encoding.UTF8.GetByteCount(value);
        WriteCount(length + 1);
        Encoding.UTF8.GetBytes(value, buffer.GetSpan(length));
        buffer.Advance(length);
    }

    /// <summary>
    /// Writes a reference slot: <see cref="ReferenceMarker.Null"/>, a back-reference to an object already written, or
    /// <see cref="ReferenceMarker.New"/> with the candidate index (when the slot has several) and the shape's header;
    /// the body follows later, from <see cref="Drain"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WriteReference(object? value, ReferenceCandidates candidates)
    {
        if (value is null)
        {
            WriteCount(ReferenceMarker.Null);
            return;
        }
        // Empty arrays are interchangeable (Array.Empty and [] share one), so they are values, never tracked.
        if (value is Array { Length: 0 } && candidates.Count == 1)
        {
            WriteCount(ReferenceMarker.EmptyArray);
            return;
        }
        if (_ids.TryGetValue(value, out int id))
        {
            if (!preserveReferences)
                throw new MpiException(ErrorClass.Serialization, $"A {TypeNames.Of(value.GetType())} is reachable twice in the object graph " +
                    "(a shared or cyclic reference); set EnvironmentOptions.PreserveReferences to send object graphs.");
            WriteCount(ReferenceMarker.BackReference);
            WriteCount(id);
            return;
        }
        var (index, shape) = candidates.For(value);
        WriteCount(ReferenceMarker.New);
        if (candidates.Count > 1) WriteCount(index);
        shape.WriteHeader(this, value);
        _ids.Add(value, _ids.Count);
        _pending.Enqueue((value, shape));
    }

    /// <summary>Writes the bodies of every object referred to so far, and of those they refer to, in order.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Drain()
    {
        while (_pending.TryDequeue(out var next)) next.Shape.WriteBody(this, next.Value);
    }

    /// <summary>Done with the message: the identity map lets go of its objects and, if small, serves the thread's next message.</summary>
    public void Release()
    {
        if (_ids.Count > SpareIdsLimit) return;
        _ids.Clear();
        t_spareIds = _ids;
    }

    private static Dictionary<object, int>? TakeSpareIds()
    {
        var spare = t_spareIds;
        t_spareIds = null;
        return spare;
    }
}

/// <summary>The first varint of a reference slot.</summary>
internal static class ReferenceMarker
{
    public const int Null = 0, New = 1, BackReference = 2, EmptyArray = 3;
}
