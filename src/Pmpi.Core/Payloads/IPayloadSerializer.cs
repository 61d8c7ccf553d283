using System.Buffers;

namespace Pmpi.Payloads;

/// <summary>
/// Turns objects that are not primitives, unmanaged structs, strings or arrays of those into bytes and back.
/// Every rank of a job must use the same serializer. The default is <see cref="JsonPayloadSerializer"/>.
/// </summary>
public interface IPayloadSerializer
{
    /// <summary>Writes <paramref name="value"/> to <paramref name="destination"/>.</summary>
    void Serialize<T>(IBufferWriter<byte> destination, T value);

    /// <summary>Reads a value of type <typeparamref name="T"/> written by <see cref="Serialize{T}"/>.</summary>
    T Deserialize<T>(ReadOnlySpan<byte> source);
}
