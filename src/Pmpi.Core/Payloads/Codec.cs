using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using Pmpi.Matching;
using Pmpi.Payloads.Internal;

namespace Pmpi.Payloads;

/// <summary>
/// Payload bytes leaving a rank: borrowed from the caller (valid until the send completes), or a copy of them; a
/// copy rented from the shared pool says so (<see cref="Rented"/>, which whoever ends up holding the bytes returns).
/// </summary>
internal readonly record struct OutgoingPayload(PayloadType Type, ReadOnlyMemory<byte> Bytes, byte[]? Rented);

/// <summary>A job's choices for objects: the serializer of the JSON path, and whether the field path keeps shared references.</summary>
internal sealed record PayloadSettings(IPayloadSerializer Serializer, bool PreserveReferences)
{
    public static PayloadSettings Default { get; } = new(JsonPayloadSerializer.Default, PreserveReferences: false);
}

/// <summary>Encodes and decodes values of one type; one cached instance per type (<see cref="Instance"/>).</summary>
internal abstract class Codec<T>
{
    public static readonly Codec<T> Instance = CodecFactory.Create<T>();

    public abstract PayloadType Type { get; }

    /// <summary>Whether <see cref="Decode"/> returns the message as a new array of its elements (raw arrays).</summary>
    public virtual bool ReturnsNewArray => false;

    public abstract OutgoingPayload Encode(T value, PayloadSettings settings);

    /// <summary>Decodes a message whose <see cref="Message.Type"/> equals <see cref="Type"/>.</summary>
    public abstract T Decode(Message message, PayloadSettings settings);
}

/// <summary>
/// The array form of a broadcast for a <typeparamref name="T"/> that is an array of a raw type, reached from the
/// single-value form (<see cref="Intracommunicator.Broadcast{T}(ref T, int)"/>, which F#'s <c>Mpi.broadcast</c> and
/// generic callers use): a large array may go by blocks, and every rank must choose as the root does.
/// </summary>
internal interface IArrayBroadcast<T>
{
    T Broadcast(Intracommunicator comm, T values, int root);
}

internal static class CodecFactory
{
    public static Codec<T> Create<T>()
    {
        var type = typeof(T);
        if (type == typeof(string)) return (Codec<T>)(object)new StringCodec();
        if (!RuntimeHelpers.IsReferenceOrContainsReferences<T>()) return new RawCodec<T>();
        var element = type.IsSZArray ? type.GetElementType() : null;
        if (element is not null && PrimitiveArray(element) is Codec<T> primitives) return primitives;
        if (!RunTimeCode)
            return element is { IsValueType: true } || FieldLayout.TakesFieldPath(type)
                ? new RefusedCodec<T>($"a Native AOT rank cannot send or receive a {TypeNames.Of(type)}: its codec is made at run time. Send primitives, strings, unmanaged structs, arrays of primitives, or objects through a job serializer built by source generation (docs/architecture.md, \"Native AOT ranks\"); or publish the rank without PublishAot")
                : new SerializedCodec<T>();
        if (element is not null && RawTypes.IsRaw(element))
            return (Codec<T>)Activator.CreateInstance(typeof(RawArrayCodec<>).MakeGenericType(element))!;
        if (FieldLayout.TakesFieldPath(type)) return new FieldsCodec<T>();
        return new SerializedCodec<T>();
    }

    /// <summary>
    /// Whether codecs may be made at run time: arrays of enums and of other unmanaged structs, and [Serializable] types
    /// field by field, need generic types instantiated and methods emitted for the type at hand, and read its fields by
    /// reflection. A Native AOT rank has neither. The switch is the one the SDK sets false for a Native AOT publish, so
    /// the compiler drops these paths there; a trimmed rank that keeps the JIT must keep its payload types' fields.
    /// </summary>
    [FeatureSwitchDefinition(DynamicCodeSwitch)]
    [FeatureGuard(typeof(RequiresDynamicCodeAttribute))]
    [FeatureGuard(typeof(RequiresUnreferencedCodeAttribute))]
    private static bool RunTimeCode { get; } =
        AppContext.TryGetSwitch(DynamicCodeSwitch, out bool enabled) ? enabled : RuntimeFeature.IsDynamicCodeSupported;

    private const string DynamicCodeSwitch = "System.Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported";

    /// <summary>The codec of an array of a primitive type, instantiated here so that ahead-of-time compiled ranks have it.</summary>
    private static object? PrimitiveArray(Type element) => element.IsEnum ? null : Type.GetTypeCode(element) switch
    {
        TypeCode.Byte => new RawArrayCodec<byte>(),
        TypeCode.SByte => new RawArrayCodec<sbyte>(),
        TypeCode.Int16 => new RawArrayCodec<short>(),
        TypeCode.UInt16 => new RawArrayCodec<ushort>(),
        TypeCode.Int32 => new RawArrayCodec<int>(),
        TypeCode.UInt32 => new RawArrayCodec<uint>(),
        TypeCode.Int64 => new RawArrayCodec<long>(),
        TypeCode.UInt64 => new RawArrayCodec<ulong>(),
        TypeCode.Single => new RawArrayCodec<float>(),
        TypeCode.Double => new RawArrayCodec<double>(),
        TypeCode.Boolean => new RawArrayCodec<bool>(),
        TypeCode.Char => new RawArrayCodec<char>(),
        TypeCode.Decimal => new RawArrayCodec<decimal>(),
        _ when element == typeof(Half) => new RawArrayCodec<Half>(),
        _ => null,
    };
}

/// <summary>Which types travel as raw bytes, and their codes.</summary>
internal static class RawTypes
{
    [RequiresDynamicCode("Instantiates RuntimeHelpers.IsReferenceOrContainsReferences for the type.")]
    public static bool IsRaw(Type type) =>
        !(bool)typeof(RuntimeHelpers).GetMethod(nameof(RuntimeHelpers.IsReferenceOrContainsReferences))!
            .MakeGenericMethod(type).Invoke(null, null)!;

    public static PayloadType TypeOf(Type type, bool isArray)
    {
        var code = Type.GetTypeCode(type) switch
        {
            TypeCode.Byte => PayloadCode.Byte,
            TypeCode.SByte => PayloadCode.SByte,
            TypeCode.Int16 => PayloadCode.Int16,
            TypeCode.UInt16 => PayloadCode.UInt16,
            TypeCode.Int32 when !type.IsEnum => PayloadCode.Int32,
            TypeCode.UInt32 when !type.IsEnum => PayloadCode.UInt32,
            TypeCode.Int64 when !type.IsEnum => PayloadCode.Int64,
            TypeCode.UInt64 when !type.IsEnum => PayloadCode.UInt64,
            TypeCode.Single => PayloadCode.Single,
            TypeCode.Double => PayloadCode.Double,
            TypeCode.Boolean => PayloadCode.Boolean,
            TypeCode.Char => PayloadCode.Char,
            TypeCode.Decimal => PayloadCode.Decimal,
            _ when type == typeof(Half) => PayloadCode.Half,
            _ => PayloadCode.Struct,
        };
        return new PayloadType(code, isArray, code == PayloadCode.Struct ? type.FullName : null);
    }

    /// <summary>The bytes of an array of a raw type, without copying (T is unconstrained for the generic API).</summary>
    public static Span<byte> BytesOf<T>(T[] array) =>
        MemoryMarshal.CreateSpan(ref Unsafe.As<T, byte>(ref MemoryMarshal.GetArrayDataReference(array)), array.Length * Unsafe.SizeOf<T>());

    /// <summary>
    /// A new array for <paramref name="byteCount"/> bytes of elements of a primitive <paramref name="code"/>, not
    /// zeroed since a link is about to fill it; null for other codes or a length that is no whole number of elements
    /// (the receive then reports the mismatch as usual). A type is never looked up by a name from the wire.
    /// </summary>
    public static Array? NewArray(PayloadCode code, int byteCount) => code switch
    {
        PayloadCode.Byte => New<byte>(byteCount),
        PayloadCode.SByte => New<sbyte>(byteCount),
        PayloadCode.Int16 => New<short>(byteCount),
        PayloadCode.UInt16 => New<ushort>(byteCount),
        PayloadCode.Int32 => New<int>(byteCount),
        PayloadCode.UInt32 => New<uint>(byteCount),
        PayloadCode.Int64 => New<long>(byteCount),
        PayloadCode.UInt64 => New<ulong>(byteCount),
        PayloadCode.Single => New<float>(byteCount),
        PayloadCode.Double => New<double>(byteCount),
        PayloadCode.Char => New<char>(byteCount),
        PayloadCode.Decimal => New<decimal>(byteCount),
        PayloadCode.Half => New<Half>(byteCount),
        _ => null,
    };

    private static T[]? New<T>(int byteCount) where T : unmanaged =>
        byteCount % Unsafe.SizeOf<T>() == 0 ? GC.AllocateUninitializedArray<T>(byteCount / Unsafe.SizeOf<T>()) : null;

    /// <summary>A copy of <paramref name="bytes"/> that the payload owns (<see cref="PayloadBuffers"/>).</summary>
    public static OutgoingPayload Copy(PayloadType type, ReadOnlySpan<byte> bytes)
    {
        var buffer = PayloadBuffers.Get(bytes.Length, out var rented);
        bytes.CopyTo(buffer);
        return new OutgoingPayload(type, buffer.AsMemory(0, bytes.Length), rented);
    }
}

/// <summary>A primitive or unmanaged struct: its bytes as they lie in memory.</summary>
internal sealed class RawCodec<T> : Codec<T>
{
    public override PayloadType Type { get; } = RawTypes.TypeOf(typeof(T), isArray: false);

    public override OutgoingPayload Encode(T value, PayloadSettings settings) =>
        RawTypes.Copy(Type, MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<T, byte>(ref value), Unsafe.SizeOf<T>()));

    public override T Decode(Message message, PayloadSettings settings)
    {
        var bytes = message.Payload.Span;
        if (bytes.Length != Unsafe.SizeOf<T>())
            throw new MessageTruncatedException($"A {Type} takes {Unsafe.SizeOf<T>()} bytes but the message holds {bytes.Length}.");
        return Unsafe.ReadUnaligned<T>(ref MemoryMarshal.GetReference(bytes));
    }
}

/// <summary>An array of a raw type: borrowed for sending (no copy), copied once into the receiver's array.</summary>
internal sealed class RawArrayCodec<TElement> : Codec<TElement[]>, IArrayBroadcast<TElement[]>
{
    public TElement[] Broadcast(Intracommunicator comm, TElement[] values, int root)
    {
        comm.Broadcast(ref values, root);
        return values;
    }

    public override PayloadType Type { get; } = RawTypes.TypeOf(typeof(TElement), isArray: true);

    public override bool ReturnsNewArray => true;

    public override OutgoingPayload Encode(TElement[] value, PayloadSettings settings)
    {
        ArgumentNullException.ThrowIfNull(value);
        // Bytes are memory as they are; other elements need a manager that shows them as bytes.
        if (typeof(TElement) == typeof(byte)) return new(Type, Unsafe.As<byte[]>(value), null);
        return new(Type, new ArrayBytes(value, value.Length * Unsafe.SizeOf<TElement>()).Memory, null);
    }

    public override TElement[] Decode(Message message, PayloadSettings settings)
    {
        if (TakeReceived(message) is { } received) return received;
        var bytes = message.Payload.Span;
        // Every element is overwritten at once: no need to zero a large array first.
        var result = GC.AllocateUninitializedArray<TElement>(ElementCount(bytes.Length));
        bytes.CopyTo(RawTypes.BytesOf(result));
        return result;
    }

    /// <summary>
    /// Copies the message into <paramref name="destination"/> from element <paramref name="at"/> on, allocating it
    /// when null. Returns the element count. A destination too small throws a truncation error (MPI-4.1 §3.2.5).
    /// </summary>
    public int DecodeInto(Message message, ref TElement[]? destination, int at = 0)
    {
        if (destination is null && TakeReceived(message) is { } received)
        {
            destination = received;
            return received.Length;
        }
        var bytes = message.Payload.Span;
        int count = ElementCount(bytes.Length);
        // A link read it straight into the destination, where the receive said (ReceiveTarget).
        if (destination is not null && ReferenceEquals(message.Elements, destination)) return count;
        destination ??= GC.AllocateUninitializedArray<TElement>(count);
        if (count > destination.Length - at)
            throw new MessageTruncatedException($"A message of {count} {Type with { IsArray = false }} elements does not fit a buffer of {destination.Length - at}.");
        bytes.CopyTo(RawTypes.BytesOf(destination)[(at * Unsafe.SizeOf<TElement>())..]);
        return count;
    }

    /// <summary>The array a link read the message into, if it is one of exactly this element type.</summary>
    private static TElement[]? TakeReceived(Message message) =>
        message.Elements?.GetType() == typeof(TElement[]) ? (TElement[])message.Elements : null;

    private int ElementCount(int byteCount)
    {
        int size = Unsafe.SizeOf<TElement>();
        if (byteCount % size != 0)
            throw new MpiException(ErrorClass.TypeMismatch, $"{byteCount} bytes are not a whole number of {Type} elements of {size} bytes.");
        return byteCount / size;
    }
}

internal sealed class StringCodec : Codec<string>
{
    public override PayloadType Type { get; } = new(PayloadCode.String, false, null);

    public override OutgoingPayload Encode(string value, PayloadSettings settings)
    {
        ArgumentNullException.ThrowIfNull(value);
        var rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(value.Length));
        int length = Encoding.UTF8.GetBytes(value, rented);
        return new OutgoingPayload(Type, rented.AsMemory(0, length), rented);
    }

    public override string Decode(Message message, PayloadSettings settings) => Encoding.UTF8.GetString(message.Payload.Span);
}

/// <summary>A type this rank cannot encode or decode: every use fails with the reason, naming the type.</summary>
internal sealed class RefusedCodec<T>(string reason) : Codec<T>
{
    public override PayloadType Type { get; } = new(PayloadCode.Serialized, false, TypeNames.Of(typeof(T)));

    public override OutgoingPayload Encode(T value, PayloadSettings settings) => throw new MpiException(ErrorClass.Serialization, $"Cannot send: {reason}.");

    public override T Decode(Message message, PayloadSettings settings) => throw new MpiException(ErrorClass.Serialization, $"Cannot receive: {reason}.");
}

/// <summary>Any other type, through the job's serializer; the sender's type name lets the receiver check it.</summary>
internal sealed class SerializedCodec<T> : Codec<T>
{
    public override PayloadType Type { get; } = new(PayloadCode.Serialized, false, TypeNames.Of(typeof(T)));

    public override OutgoingPayload Encode(T value, PayloadSettings settings)
    {
        var writer = new PooledBufferWriter();
        try
        {
            settings.Serializer.Serialize(writer, value);
        }
        catch (Exception e) when (e is not MpiException)
        {
            writer.Dispose();
            throw new MpiException(ErrorClass.Serialization, $"Cannot serialize a {Type.TypeName}: {e.Message}", e);
        }
        return new OutgoingPayload(Type, writer.WrittenMemory, writer.Detach());
    }

    public override T Decode(Message message, PayloadSettings settings)
    {
        try
        {
            return settings.Serializer.Deserialize<T>(message.Payload.Span);
        }
        catch (Exception e) when (e is not MpiException)
        {
            throw new MpiException(ErrorClass.Serialization, $"Cannot deserialize a {Type.TypeName}: {e.Message}", e);
        }
    }
}

/// <summary>
/// A [Serializable] type (or arrays and collections of them) field by field (<see cref="FieldWriter"/>): the layout's
/// fingerprint, then the value. A type that cannot be written fails at the sender, naming the type and field.
/// </summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class FieldsCodec<T> : Codec<T>
{
    private readonly string? _problem;
    private readonly ulong _fingerprint;

    public FieldsCodec() => (_problem, _fingerprint) = FieldLayout.Analyze(typeof(T));

    public override PayloadType Type { get; } = new(PayloadCode.Fields, false, TypeNames.Of(typeof(T)));

    public override OutgoingPayload Encode(T value, PayloadSettings settings)
    {
        if (_problem is not null) throw new MpiException(ErrorClass.Serialization, $"Cannot send a {Type.TypeName}: {_problem}.");
        var buffer = new PooledBufferWriter();
        try
        {
            var writer = new FieldWriter(buffer, settings.PreserveReferences);
            writer.WriteRaw(_fingerprint);
            Slot<T>.Write(writer, value);
            writer.Drain();
            writer.Release();
        }
        catch (Exception e)
        {
            buffer.Dispose();
            if (e is MpiException) throw;
            throw new MpiException(ErrorClass.Serialization, $"Cannot serialize a {Type.TypeName}: {e.Message}", e);
        }
        return new OutgoingPayload(Type, buffer.WrittenMemory, buffer.Detach());
    }

    public override T Decode(Message message, PayloadSettings settings)
    {
        if (_problem is not null) throw new MpiException(ErrorClass.Serialization, $"Cannot receive a {Type.TypeName}: {_problem}.");
        try
        {
            var reader = new FieldReader(message.Payload);
            if (reader.ReadRaw<ulong>() != _fingerprint)
                throw new MpiException(ErrorClass.Serialization, $"The sender's {Type.TypeName} has other fields than the receiver's (a different version of the type or of a type it holds).");
            var value = Slot<T>.Read(reader);
            reader.Drain();
            return value;
        }
        catch (Exception e) when (e is not MpiException)
        {
            throw new MpiException(ErrorClass.Serialization, $"Cannot deserialize a {Type.TypeName}: {e.Message}", e);
        }
    }
}

/// <summary>Readable, language-neutral names for types (generic arguments spelled out, no assembly versions).</summary>
internal static class TypeNames
{
    public static string Of(Type type)
    {
        if (type.IsArray) return Of(type.GetElementType()!) + "[]";
        if (!type.IsGenericType) return type.FullName ?? type.Name;
        var name = type.GetGenericTypeDefinition().FullName!;
        return name[..name.IndexOf('`', StringComparison.Ordinal)] + "<" + string.Join(",", type.GetGenericArguments().Select(Of)) + ">";
    }
}
