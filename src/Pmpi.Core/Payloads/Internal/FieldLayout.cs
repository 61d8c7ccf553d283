using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Text;

namespace Pmpi.Payloads.Internal;

/// <summary>
/// Which types take the field-based path, whether everything reachable from a type through its declared fields can be
/// written, and a fingerprint of that layout so a receiver whose types differ from the sender's says so.
/// </summary>
internal static class FieldLayout
{
    /// <summary>Why the field path needs the JIT: what its members' annotations say to the trim and AOT analysis.</summary>
    public const string RunTimeCode = "Sends the type field by field: reads its fields by reflection and emits code for it at run time.";

    /// <summary>
    /// Whether values of <paramref name="type"/> are sent field by field: a type marked [Serializable] outside the .NET
    /// libraries, or an array or generic type (List, Dictionary, tuple, ...) with such a type among its arguments.
    /// F# types are left to the job's serializer (see <see cref="IsFSharp"/>).
    /// </summary>
    public static bool TakesFieldPath(Type type)
    {
        if (type.IsArray) return TakesFieldPath(type.GetElementType()!);
        if (IsFSharp(type)) return false;
        if (IsUserSerializable(type)) return true;
        return type.IsGenericType && type.GetGenericArguments().Any(TakesFieldPath);
    }

    /// <summary>The fields written for <paramref name="type"/>: its bases' first, each type's by name, without [NonSerialized] ones.</summary>
    [RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
    public static FieldInfo[] SerializedFields(Type type)
    {
        var hierarchy = new List<Type>();
        for (var t = type; t is not null && t != typeof(object) && t != typeof(ValueType); t = t.BaseType) hierarchy.Insert(0, t);
        return [.. hierarchy.SelectMany(t => t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly)
            .Where(f => !IsNotSerialized(f)).OrderBy(f => f.Name, StringComparer.Ordinal))];
    }

    /// <summary>
    /// Walks every type reachable from <paramref name="root"/>: the first thing that cannot be written (naming the type
    /// and field), or null; and a fingerprint of the whole layout (type and field names, in wire order).
    /// </summary>
    [RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
    public static (string? Problem, ulong Fingerprint) Analyze(Type root)
    {
        var walk = new Walk();
        var problem = walk.Problem(root);
        return (problem, Fnv1a(walk.Signature.ToString()));
    }

    /// <summary>
    /// Records, unions and FSharp.Core's collections are compiled [Serializable], but their shapes are not what a field
    /// copy rebuilds (union cases are compiler-generated subclasses; a map holds a comparer), so they travel through the
    /// job's serializer: JSON carries records, lists, options, maps and sets, and Pmpi.FSharp's serializer adds unions.
    /// </summary>
    private static bool IsFSharp(Type type) =>
        type.Assembly.GetName().Name == "FSharp.Core" ||
        type.CustomAttributes.Any(a => a.AttributeType.FullName == "Microsoft.FSharp.Core.CompilationMappingAttribute");

    private static bool IsUserSerializable(Type type) =>
        IsMarkedSerializable(type) && !type.IsPrimitive && !type.IsEnum && !typeof(Delegate).IsAssignableFrom(type) && !IsFramework(type.Assembly);

    // [Serializable] and [NonSerialized] are what MPI.NET programs mark their types with; only the formatter that read
    // them is obsolete, and PMPI does not use it.
#pragma warning disable SYSLIB0050
    private static bool IsMarkedSerializable(Type type) => (type.Attributes & TypeAttributes.Serializable) != 0;

    private static bool IsNotSerialized(FieldInfo field) => (field.Attributes & FieldAttributes.NotSerialized) != 0;
#pragma warning restore SYSLIB0050

    private static bool IsFramework(Assembly assembly) =>
        assembly == typeof(object).Assembly || assembly.GetName().Name is { } name &&
        (name.StartsWith("System.", StringComparison.Ordinal) || name.StartsWith("Microsoft.", StringComparison.Ordinal) || name is "mscorlib" or "netstandard");

    // 64-bit FNV-1a: a layout checksum, not a security measure (the receiver never trusts the payload's types anyway).
    private static ulong Fnv1a(string text)
    {
        ulong hash = 14695981039346656037;
        foreach (char c in text) hash = (hash ^ c) * 1099511628211;
        return hash;
    }

    [RequiresDynamicCode(FieldLayout.RunTimeCode), RequiresUnreferencedCode(FieldLayout.RunTimeCode)]
    private sealed class Walk
    {
        private readonly HashSet<Type> _visited = [];

        public StringBuilder Signature { get; } = new();

        public string? Problem(Type type)
        {
            Signature.Append(TypeNames.Of(type)).Append(';');
            if (!_visited.Add(type) || RawTypes.IsRaw(type) || type == typeof(string)) return null;
            if (type.IsPointer || type.IsByRef || typeof(Delegate).IsAssignableFrom(type))
                return $"{TypeNames.Of(type)} cannot travel: pointers and delegates mean nothing on another rank";
            if (Nullable.GetUnderlyingType(type) is { } underlying) return Problem(underlying);
            if (type.IsArray)
                return type.IsSZArray ? Problem(type.GetElementType()!) : $"{TypeNames.Of(type)} is a multidimensional array; use a jagged or flat array";
            if (type.IsGenericType && type.GetGenericTypeDefinition() is var definition &&
                (definition == typeof(List<>) || definition == typeof(HashSet<>) || definition == typeof(Dictionary<,>)))
                return type.GetGenericArguments().Select(Problem).FirstOrDefault(p => p is not null);
            if (type.IsInterface || type == typeof(object))
                return $"a field declared {TypeNames.Of(type)} does not say what to create; declare a concrete type, or an abstract base marked [KnownType]";
            if (type.IsValueType) return Fields(type);
            var candidates = ReferenceCandidates.ConcreteTypes(type);
            if (candidates.Length == 0) return $"{TypeNames.Of(type)} is abstract and names no [KnownType] to create";
            foreach (var candidate in candidates)
            {
                Signature.Append('|');
                var problem = candidate == type ? Fields(type) : Problem(candidate);
                if (problem is not null) return problem;
            }
            return null;
        }

        private string? Fields(Type type)
        {
            for (var t = type; t is not null && t != typeof(object) && t != typeof(ValueType); t = t.BaseType)
                if (!IsMarkedSerializable(t))
                    return t == type
                        ? $"{TypeNames.Of(type)} is not marked [Serializable]"
                        : $"{TypeNames.Of(type)} derives from {TypeNames.Of(t)}, which is not marked [Serializable]";
            Signature.Append('{');
            foreach (var field in SerializedFields(type))
            {
                Signature.Append(field.Name).Append(':');
                if (Problem(field.FieldType) is { } problem) return $"{TypeNames.Of(type)}.{field.Name}: {problem}";
            }
            Signature.Append('}');
            return null;
        }
    }
}
