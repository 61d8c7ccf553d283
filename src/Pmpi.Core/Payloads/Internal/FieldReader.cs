using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace Pmpi.Payloads.Internal;

/// <summary>
/// Reads what <see cref="FieldWriter"/> wrote, instantiating only the types the receiver's declared fields name
/// (and the [KnownType]s those declare). Every count is checked against the bytes left, so a corrupt or hostile
/// payload cannot make it allocate more than the message's size.
/// </summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class FieldReader
{
    // The payload as an array segment: a read slices the array directly, not through ReadOnlyMemory.Span each time.
    private readonly ArraySegment<byte> _payload;
    private readonly List<object> _objects = [];
    private readonly Queue<(object Value, ReferenceShape Shape)> _pending = new();
    private List<Action>? _completions;
    private int _position;

    public FieldReader(ReadOnlyMemory<byte> payload) =>
        _payload = MemoryMarshal.TryGetArray(payload, out var segment) ? segment : new ArraySegment<byte>(payload.ToArray());

    public int Remaining => _payload.Count - _position;

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public T ReadRaw<T>() => Unsafe.ReadUnaligned<T>(ref MemoryMarshal.GetReference(Take(Unsafe.SizeOf<T>())));

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public ReadOnlySpan<byte> Take(int count)
    {
        if ((uint)count > (uint)Remaining) throw Malformed($"{count} bytes were expected but {Remaining} remain");
        var span = new ReadOnlySpan<byte>(_payload.Array, _payload.Offset + _position, count);
        _position += count;
        return span;
    }

    /// <summary>A count written by <see cref="FieldWriter.WriteCount"/>; every element takes at least a byte, so a count above the bytes left is corrupt.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int ReadCount()
    {
        uint value = 0;
        for (int shift = 0; shift < 35; shift += 7)
        {
            byte next = Take(1)[0];
            value |= (uint)(next & 0x7F) << shift;
            if (next < 0x80)
            {
                if (value > int.MaxValue) break;
                return (int)value;
            }
        }
        throw Malformed("a count is not a valid varint");
    }

    /// <summary>A count of elements that must still be in the payload.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int ReadLength()
    {
        int count = ReadCount();
        if (count > Remaining) throw Malformed($"a length of {count} exceeds the {Remaining} bytes left");
        return count;
    }

    public string? ReadString()
    {
        int length = ReadCount();
        return length == 0 ? null : Encoding.UTF8.GetString(Take(length - 1));
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public object? ReadReference(ReferenceCandidates candidates)
    {
        switch (ReadCount())
        {
            case ReferenceMarker.Null:
                return null;
            case ReferenceMarker.EmptyArray:
                return candidates[0].CreateEmpty();
            case ReferenceMarker.BackReference:
                int id = ReadCount();
                if (id >= _objects.Count) throw Malformed($"a back-reference to object {id} of {_objects.Count}");
                return _objects[id];
            case ReferenceMarker.New:
                int index = candidates.Count > 1 ? ReadCount() : 0;
                if (index >= candidates.Count) throw Malformed($"candidate {index} of {candidates.Count} for a {TypeNames.Of(candidates.Declared)}");
                var shape = candidates[index];
                var value = shape.Create(this);
                _objects.Add(value);
                _pending.Enqueue((value, shape));
                return value;
            default:
                throw Malformed("an unknown reference marker");
        }
    }

    /// <summary>Runs <paramref name="completion"/> once every object is filled (hash sets and dictionaries need their keys' fields).</summary>
    public void OnComplete(Action completion) => (_completions ??= []).Add(completion);

    /// <summary>Reads the bodies of every object met so far, then runs the completions; the payload must end there.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Drain()
    {
        while (_pending.TryDequeue(out var next)) next.Shape.ReadBody(this, next.Value);
        if (_completions is not null)
            foreach (var completion in _completions) completion();
        if (Remaining != 0) throw Malformed($"{Remaining} bytes follow the value");
    }

    public static InvalidDataException Malformed(string what) => new($"The payload is malformed: {what}.");
}
