using System.Buffers;
using System.Text.Json;

namespace Pmpi.Payloads;

/// <summary>
/// The default serializer: UTF-8 JSON via System.Text.Json, with public fields included so tuples and plain structs
/// round-trip. Safe (it instantiates only the type the receiver names, never a type the payload names) and readable
/// by any language, unlike BinaryFormatter.
/// </summary>
public sealed class JsonPayloadSerializer : IPayloadSerializer
{
    private readonly JsonSerializerOptions _options;

    /// <summary>Creates a serializer; <paramref name="options"/> defaults to web defaults with fields included.</summary>
    public JsonPayloadSerializer(JsonSerializerOptions? options = null) =>
        _options = options ?? new JsonSerializerOptions(JsonSerializerDefaults.General) { IncludeFields = true };

    /// <summary>The shared default instance.</summary>
    public static JsonPayloadSerializer Default { get; } = new();

    /// <inheritdoc/>
    public void Serialize<T>(IBufferWriter<byte> destination, T value)
    {
        using var writer = new Utf8JsonWriter(destination);
        JsonSerializer.Serialize(writer, value, _options);
    }

    /// <inheritdoc/>
    public T Deserialize<T>(ReadOnlySpan<byte> source) => JsonSerializer.Deserialize<T>(source, _options)!;
}
