using System.Diagnostics.CodeAnalysis;
using System.Collections.Concurrent;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Serialization;

namespace Pmpi.Payloads.Internal;

/// <summary>How a value of type <typeparamref name="T"/> is written inside a field-based payload.</summary>
internal abstract class FieldCodec<T>
{
    public abstract void Write(FieldWriter writer, T value);

    public abstract T Read(FieldReader reader);
}

/// <summary>The codec of each field type, made on first use; the methods emitted for object bodies call these.</summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal static class Slot<T>
{
    private static FieldCodec<T>? s_codec;

    public static FieldCodec<T> Codec => s_codec ??= FieldCodecs.Create<T>();

    public static void Write(FieldWriter writer, T value) => Codec.Write(writer, value);

    public static T Read(FieldReader reader) => Codec.Read(reader);
}

[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal static class FieldCodecs
{
    public static FieldCodec<T> Create<T>()
    {
        var type = typeof(T);
        if (!RuntimeHelpers.IsReferenceOrContainsReferences<T>()) return new RawField<T>();
        if (type == typeof(string)) return (FieldCodec<T>)(object)new StringField();
        if (Nullable.GetUnderlyingType(type) is { } underlying)
            return (FieldCodec<T>)Activator.CreateInstance(typeof(NullableField<>).MakeGenericType(underlying))!;
        if (type.IsValueType) return new StructField<T>();
        return new ReferenceField<T>();
    }
}

internal sealed class RawField<T> : FieldCodec<T>
{
    public override void Write(FieldWriter writer, T value) => writer.WriteRaw(value);

    public override T Read(FieldReader reader) => reader.ReadRaw<T>();
}

internal sealed class StringField : FieldCodec<string?>
{
    public override void Write(FieldWriter writer, string? value) => writer.WriteString(value);

    public override string? Read(FieldReader reader) => reader.ReadString();
}

[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class NullableField<T> : FieldCodec<T?> where T : struct
{
    public override void Write(FieldWriter writer, T? value)
    {
        writer.WriteRaw(value.HasValue);
        if (value is { } present) Slot<T>.Write(writer, present);
    }

    public override T? Read(FieldReader reader) => reader.ReadRaw<bool>() ? Slot<T>.Read(reader) : null;
}

/// <summary>A [Serializable] struct holding references: its fields inline, through a box.</summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class StructField<T> : FieldCodec<T>
{
    private readonly ObjectShape _shape = (ObjectShape)ReferenceShape.Of(typeof(T));

    public override void Write(FieldWriter writer, T value) => _shape.WriteBody(writer, value!);

    public override T Read(FieldReader reader)
    {
        object boxed = RuntimeHelpers.GetUninitializedObject(typeof(T));
        _shape.ReadBody(reader, boxed);
        return (T)boxed;
    }
}

[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class ReferenceField<T> : FieldCodec<T>
{
    private readonly ReferenceCandidates _candidates = ReferenceCandidates.Of(typeof(T));

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void Write(FieldWriter writer, T value) => writer.WriteReference(value, _candidates);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override T Read(FieldReader reader) => (T)reader.ReadReference(_candidates)!;
}

/// <summary>
/// The concrete types a reference slot of a declared type may hold: the type itself unless abstract, the types its
/// [KnownType] attributes name, and its own nested types that derive from it (how F# compiles a union's cases), ordered
/// by name so sender and receiver number them alike. Only these are ever instantiated for the slot.
/// </summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class ReferenceCandidates
{
    private static readonly ConcurrentDictionary<Type, ReferenceCandidates> Cache = new();

    private readonly ReferenceShape[] _shapes;

    private ReferenceCandidates(Type declared)
    {
        Declared = declared;
        _shapes = [.. ConcreteTypes(declared).Select(ReferenceShape.Of)];
    }

    public Type Declared { get; }

    public int Count => _shapes.Length;

    public ReferenceShape this[int index] => _shapes[index];

    public static ReferenceCandidates Of(Type declared) => Cache.GetOrAdd(declared, type => new ReferenceCandidates(type));

    /// <summary>The concrete types a slot declared as <paramref name="declared"/> accepts, in wire order.</summary>
    public static Type[] ConcreteTypes(Type declared)
    {
        var nested = declared.GetNestedTypes(BindingFlags.Public | BindingFlags.NonPublic).Where(t => !t.IsAbstract && !t.ContainsGenericParameters);
        var known = declared.GetCustomAttributes(typeof(KnownTypeAttribute), inherit: false).Select(a => ((KnownTypeAttribute)a).Type).OfType<Type>()
            .Concat(nested).Where(t => t != declared && declared.IsAssignableFrom(t));
        return [.. (declared.IsAbstract ? known : known.Prepend(declared)).Distinct().OrderBy(TypeNames.Of, StringComparer.Ordinal)];
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public (int Index, ReferenceShape Shape) For(object value)
    {
        var type = value.GetType();
        for (int i = 0; i < _shapes.Length; i++)
            if (_shapes[i].Type == type) return (i, _shapes[i]);
        throw new MpiException(ErrorClass.Serialization, $"A field declared {TypeNames.Of(Declared)} holds a {TypeNames.Of(type)}, which the receiver " +
            $"would not know to create; mark {TypeNames.Of(Declared)} with [KnownType(typeof({type.Name}))].");
    }
}

/// <summary>How an object of one concrete reference type is created and filled.</summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal abstract class ReferenceShape
{
    private static readonly ConcurrentDictionary<Type, ReferenceShape> Cache = new();

    public abstract Type Type { get; }

    public static ReferenceShape Of(Type type) => Cache.GetOrAdd(type, Create);

    /// <summary>What the receiver needs to allocate the object before its body arrives (an array's length).</summary>
    public virtual void WriteHeader(FieldWriter writer, object value)
    {
    }

    public abstract object Create(FieldReader reader);

    /// <summary>An empty instance, for <see cref="ReferenceMarker.EmptyArray"/>; only arrays have one.</summary>
    public virtual object CreateEmpty() => throw FieldReader.Malformed($"an empty array where a {TypeNames.Of(Type)} belongs");

    public abstract void WriteBody(FieldWriter writer, object value);

    public abstract void ReadBody(FieldReader reader, object value);

    private static ReferenceShape Create(Type type)
    {
        if (type.IsSZArray) return Generic(typeof(ArrayShape<>), type.GetElementType()!);
        if (type.IsGenericType)
        {
            var definition = type.GetGenericTypeDefinition();
            if (definition == typeof(List<>)) return Generic(typeof(ListShape<>), type.GetGenericArguments());
            if (definition == typeof(Dictionary<,>)) return Generic(typeof(DictionaryShape<,>), type.GetGenericArguments());
            if (definition == typeof(HashSet<>)) return Generic(typeof(HashSetShape<>), type.GetGenericArguments());
        }
        return new ObjectShape(type);
    }

    private static ReferenceShape Generic(Type definition, params Type[] arguments) =>
        (ReferenceShape)Activator.CreateInstance(definition.MakeGenericType(arguments))!;
}

[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class ArrayShape<T> : ReferenceShape
{
    private static readonly bool IsRaw = !RuntimeHelpers.IsReferenceOrContainsReferences<T>();

    public override Type Type => typeof(T[]);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void WriteHeader(FieldWriter writer, object value) => writer.WriteCount(((T[])value).Length);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override object Create(FieldReader reader) => new T[reader.ReadLength()];

    public override object CreateEmpty() => Array.Empty<T>();

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void WriteBody(FieldWriter writer, object value)
    {
        var array = (T[])value;
        if (IsRaw) writer.WriteBytes(RawTypes.BytesOf(array));
        else
            foreach (var item in array) Slot<T>.Write(writer, item);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void ReadBody(FieldReader reader, object value)
    {
        var array = (T[])value;
        if (IsRaw) reader.Take(array.Length * Unsafe.SizeOf<T>()).CopyTo(RawTypes.BytesOf(array));
        else
            for (int i = 0; i < array.Length; i++) array[i] = Slot<T>.Read(reader);
    }
}

[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class ListShape<T> : ReferenceShape
{
    private static readonly bool IsRaw = !RuntimeHelpers.IsReferenceOrContainsReferences<T>();

    public override Type Type => typeof(List<T>);

    public override void WriteHeader(FieldWriter writer, object value) => writer.WriteCount(((List<T>)value).Count);

    public override object Create(FieldReader reader)
    {
        var list = new List<T>();
        CollectionsMarshal.SetCount(list, reader.ReadLength());
        return list;
    }

    public override void WriteBody(FieldWriter writer, object value)
    {
        var items = CollectionsMarshal.AsSpan((List<T>)value);
        if (IsRaw) writer.WriteBytes(MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref Unsafe.As<T, byte>(ref MemoryMarshal.GetReference(items)), items.Length * Unsafe.SizeOf<T>())));
        else
            foreach (var item in items) Slot<T>.Write(writer, item);
    }

    public override void ReadBody(FieldReader reader, object value)
    {
        var items = CollectionsMarshal.AsSpan((List<T>)value);
        if (IsRaw) reader.Take(items.Length * Unsafe.SizeOf<T>()).CopyTo(MemoryMarshal.CreateSpan(ref Unsafe.As<T, byte>(ref MemoryMarshal.GetReference(items)), items.Length * Unsafe.SizeOf<T>()));
        else
            for (int i = 0; i < items.Length; i++) items[i] = Slot<T>.Read(reader);
    }
}

/// <summary>
/// Pairs in enumeration order, added once every object is filled, since a key's hash may depend on its own fields
/// (which may still be pending). The receiver's dictionary has the default comparer.
/// </summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class DictionaryShape<TKey, TValue> : ReferenceShape where TKey : notnull
{
    public override Type Type => typeof(Dictionary<TKey, TValue>);

    public override object Create(FieldReader reader) => new Dictionary<TKey, TValue>();

    public override void WriteBody(FieldWriter writer, object value)
    {
        var dictionary = (Dictionary<TKey, TValue>)value;
        writer.WriteCount(dictionary.Count);
        foreach (var (key, item) in dictionary)
        {
            Slot<TKey>.Write(writer, key);
            Slot<TValue>.Write(writer, item);
        }
    }

    public override void ReadBody(FieldReader reader, object value)
    {
        var pairs = new KeyValuePair<TKey, TValue>[reader.ReadLength()];
        for (int i = 0; i < pairs.Length; i++) pairs[i] = new(Slot<TKey>.Read(reader), Slot<TValue>.Read(reader));
        var dictionary = (Dictionary<TKey, TValue>)value;
        reader.OnComplete(() =>
        {
            foreach (var (key, item) in pairs) dictionary.Add(key, item);
        });
    }
}

/// <summary>Items in enumeration order, added once every object is filled (see <see cref="DictionaryShape{TKey, TValue}"/>).</summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class HashSetShape<T> : ReferenceShape
{
    public override Type Type => typeof(HashSet<T>);

    public override object Create(FieldReader reader) => new HashSet<T>();

    public override void WriteBody(FieldWriter writer, object value)
    {
        var set = (HashSet<T>)value;
        writer.WriteCount(set.Count);
        foreach (var item in set) Slot<T>.Write(writer, item);
    }

    public override void ReadBody(FieldReader reader, object value)
    {
        var items = new T[reader.ReadLength()];
        for (int i = 0; i < items.Length; i++) items[i] = Slot<T>.Read(reader);
        var set = (HashSet<T>)value;
        reader.OnComplete(() => set.UnionWith(items));
    }
}
