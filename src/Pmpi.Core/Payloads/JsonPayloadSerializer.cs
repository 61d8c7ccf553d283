using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Pmpi.Payloads;

/// <summary>
/// The default serializer: UTF-8 JSON via System.Text.Json, with public fields included so tuples and plain structs
/// round-trip. Safe (it instantiates only the type the receiver names, never a type the payload names) and readable
/// by any language, unlike BinaryFormatter.
/// </summary>
public sealed class JsonPayloadSerializer : IPayloadSerializer
{
    private readonly JsonSerializerOptions _options;

    /// <summary>
    /// Whether options that name no resolver serialize by reflection: the switch the SDK turns off for trimmed and
    /// Native AOT publishes, whose ranks must name their source-generated context in the options instead. Declared
    /// before <see cref="Default"/>, whose initializer reads it.
    /// </summary>
    [FeatureSwitchDefinition("System.Text.Json.JsonSerializer.IsReflectionEnabledByDefault")]
    [FeatureGuard(typeof(RequiresUnreferencedCodeAttribute))]
    [FeatureGuard(typeof(RequiresDynamicCodeAttribute))]
    private static bool ReflectionByDefault { get; } = JsonSerializer.IsReflectionEnabledByDefault;

    /// <summary>Creates a serializer; <paramref name="options"/> defaults to web defaults with fields included.</summary>
    public JsonPayloadSerializer(JsonSerializerOptions? options = null)
    {
        _options = options ?? new JsonSerializerOptions(JsonSerializerDefaults.General) { IncludeFields = true };
        if (_options.TypeInfoResolver is null && ReflectionByDefault)
            _options = new JsonSerializerOptions(_options) { TypeInfoResolver = new DefaultJsonTypeInfoResolver() };
    }

    /// <summary>The shared default instance.</summary>
    public static JsonPayloadSerializer Default { get; } = new();

    /// <inheritdoc/>
    public void Serialize<T>(IBufferWriter<byte> destination, T value)
    {
        using var writer = new Utf8JsonWriter(destination);
        JsonSerializer.Serialize(writer, value, TypeInfo<T>());
    }

    /// <inheritdoc/>
    public T Deserialize<T>(ReadOnlySpan<byte> source) => JsonSerializer.Deserialize(source, TypeInfo<T>())!;

    private JsonTypeInfo<T> TypeInfo<T>() => (JsonTypeInfo<T>)_options.GetTypeInfo(typeof(T));
}
