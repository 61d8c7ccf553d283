using System.Runtime.CompilerServices;
using Pmpi.Payloads;

namespace Pmpi;

/// <summary>What a probe or receive learned about a message: its source, tag and size (MPI_Status).</summary>
public class Status
{
    private readonly PayloadType _type;
    private readonly int _byteCount;

    internal Status(int source, int tag, PayloadType type, int byteCount)
    {
        Source = source;
        Tag = tag;
        _type = type;
        _byteCount = byteCount;
    }

    /// <summary>The sender's rank in the communicator.</summary>
    public int Source { get; }

    /// <summary>The message's tag.</summary>
    public int Tag { get; }

    /// <summary>
    /// How many elements of <paramref name="type"/> the message holds: the element count of a primitive or struct
    /// array (or 1 for a single value), 1 for a string or serialized object of that type; null when the message is
    /// not of that type (MPI_Get_count returning MPI_UNDEFINED).
    /// </summary>
    public int? Count(Type type)
    {
        ArgumentNullException.ThrowIfNull(type);
        if (_type.Code is PayloadCode.String or PayloadCode.Serialized or PayloadCode.Fields)
            return type == typeof(string) && _type.Code == PayloadCode.String || TypeNames.Of(type) == _type.TypeName ? 1 : null;
        var element = type.IsArray ? type.GetElementType()! : type;
        // Only raw codecs send primitive and struct codes, so a match means the element is raw.
        if (RawTypes.TypeOf(element, _type.IsArray) != _type) return null;
        return _byteCount / RuntimeHelpers.SizeOf(element.TypeHandle);
    }

    /// <summary>The message's size in bytes as it travelled.</summary>
    public int ByteCount => _byteCount;
}

/// <summary>The status of a completed operation, adding whether it was cancelled and how many elements it moved.</summary>
public sealed class CompletedStatus : Status
{
    internal CompletedStatus(int source, int tag, PayloadType type, int byteCount, int count, bool cancelled)
        : base(source, tag, type, byteCount)
    {
        _count = count;
        Cancelled = cancelled;
    }

    private readonly int _count;

    /// <summary>Elements received: the array length for arrays, otherwise 1 (0 for a cancelled or send operation).</summary>
    public int Count() => _count;

    /// <summary>Whether the operation was cancelled before it matched (MPI_Test_cancelled).</summary>
    public bool Cancelled { get; }

    /// <summary>MPI's empty status: of a collective, or of a persistent request that is not active.</summary>
    internal static CompletedStatus Empty { get; } = new(Communicator.AnySource, Communicator.AnyTag, default, 0, 0, cancelled: false);

    internal static CompletedStatus ForCancelled(int source, int tag) => new(source, tag, default, 0, 0, cancelled: true);
}
