using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.Serialization;

namespace Pmpi.Payloads.Internal;

/// <summary>
/// A [Serializable] class or struct: every instance field of the type and its bases, except [NonSerialized] ones,
/// through methods emitted once per type (no reflection or boxing per field). An object is created without running a
/// constructor, as BinaryFormatter did; its [OnDeserialized] methods run once the whole graph is filled.
/// </summary>
[RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
internal sealed class ObjectShape : ReferenceShape
{
    private readonly Type _type;
    private readonly Action<FieldWriter, object> _write;
    private readonly Action<FieldReader, object> _read;
    private readonly MethodInfo[] _onDeserialized;

    public ObjectShape(Type type)
    {
        _type = type;
        var fields = FieldLayout.SerializedFields(type);
        _write = EmitWriter(type, fields);
        _read = EmitReader(type, fields);
        _onDeserialized = [.. Hierarchy(type).Reverse().SelectMany(t => t.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            .Where(m => m.IsDefined(typeof(OnDeserializedAttribute)))];
    }

    public override Type Type => _type;

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override object Create(FieldReader reader) => RuntimeHelpers.GetUninitializedObject(_type);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void WriteBody(FieldWriter writer, object value) => _write(writer, value);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void ReadBody(FieldReader reader, object value)
    {
        _read(reader, value);
        if (_onDeserialized.Length > 0 && !_type.IsValueType)
            reader.OnComplete(() =>
            {
                foreach (var method in _onDeserialized) method.Invoke(value, [default(StreamingContext)]);
            });
    }

    private static IEnumerable<Type> Hierarchy(Type type)
    {
        for (var t = type; t is not null && t != typeof(object) && t != typeof(ValueType); t = t.BaseType) yield return t;
    }

    private static Action<FieldWriter, object> EmitWriter(Type type, FieldInfo[] fields)
    {
        var method = new DynamicMethod($"Write{type.Name}", null, [typeof(FieldWriter), typeof(object)], typeof(ObjectShape).Module, skipVisibility: true);
        var il = method.GetILGenerator();
        foreach (var field in fields)
        {
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(type.IsValueType ? OpCodes.Unbox : OpCodes.Castclass, type);
            il.Emit(OpCodes.Ldfld, field);
            il.Emit(OpCodes.Call, typeof(Slot<>).MakeGenericType(field.FieldType).GetMethod(nameof(Slot<int>.Write))!);
        }
        il.Emit(OpCodes.Ret);
        return method.CreateDelegate<Action<FieldWriter, object>>();
    }

    private static Action<FieldReader, object> EmitReader(Type type, FieldInfo[] fields)
    {
        var method = new DynamicMethod($"Read{type.Name}", null, [typeof(FieldReader), typeof(object)], typeof(ObjectShape).Module, skipVisibility: true);
        var il = method.GetILGenerator();
        foreach (var field in fields)
        {
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(type.IsValueType ? OpCodes.Unbox : OpCodes.Castclass, type);
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Call, typeof(Slot<>).MakeGenericType(field.FieldType).GetMethod(nameof(Slot<int>.Read))!);
            il.Emit(OpCodes.Stfld, field);
        }
        il.Emit(OpCodes.Ret);
        return method.CreateDelegate<Action<FieldReader, object>>();
    }
}
