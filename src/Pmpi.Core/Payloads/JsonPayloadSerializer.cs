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
    private readonly JsonSerializerOptions? _given;
    private JsonSerializerOptions? _options;

    /// <summary>
    /// Whether options that name no resolver serialize by reflection: the switch the SDK turns off for trimmed and
    /// Native AOT publishes, whose ranks must name their source-generated context in the options instead. Declared
    /// before <see cref="Default"/>. Read as System.Text.Json reads it, not through <see cref="JsonSerializer"/>, whose
    /// static constructor alone would load the library at a rank's start.
    /// </summary>
    [FeatureSwitchDefinition("System.Text.Json.JsonSerializer.IsReflectionEnabledByDefault")]
    [FeatureGuard(typeof(RequiresUnreferencedCodeAttribute))]
    [FeatureGuard(typeof(RequiresDynamicCodeAttribute))]
    private static bool ReflectionByDefault { get; } =
        !AppContext.TryGetSwitch("System.Text.Json.JsonSerializer.IsReflectionEnabledByDefault", out var enabled) || enabled;

    /// <summary>Creates a serializer; <paramref name="options"/> defaults to web defaults with fields included.</summary>
    public JsonPayloadSerializer(JsonSerializerOptions? options = null) => _given = options;

    /// <summary>The shared default instance.</summary>
    public static JsonPayloadSerializer Default { get; } = new();

    // Made on first use, not with the serializer: System.Text.Json's types cost a rank's start several milliseconds
    // of loading and JIT, and a rank that sends no object never needs them.
    private JsonSerializerOptions Options => _options ?? LazyInitializer.EnsureInitialized(ref _options, () =>
    {
        var options = _given ?? new JsonSerializerOptions(JsonSerializerDefaults.General) { IncludeFields = true };
        return options.TypeInfoResolver is null && ReflectionByDefault
            ? new JsonSerializerOptions(options) { TypeInfoResolver = new DefaultJsonTypeInfoResolver() }
            : options;
    });

    /// <inheritdoc/>
    public void Serialize<T>(IBufferWriter<byte> destination, T value)
    {
        using var writer = new Utf8JsonWriter(destination);
        JsonSerializer.Serialize(writer, value, TypeInfo<T>());
    }

    /// <inheritdoc/>
    public T Deserialize<T>(ReadOnlySpan<byte> source) => JsonSerializer.Deserialize(source, TypeInfo<T>())!;

    private JsonTypeInfo<T> TypeInfo<T>() => (JsonTypeInfo<T>)Options.GetTypeInfo(typeof(T));
}
