using System.Runtime.CompilerServices;

namespace Pmpi;

/// <summary>How <see cref="Communicator.Clone"/> carries an attribute's value to the new communicator (MPI.NET's names).</summary>
public enum AttributeDuplication
{
    /// <summary>Not copied: the new communicator does not have the attribute.</summary>
    None,
    /// <summary>
    /// Both communicators hold the same value: the same object, for a reference type; for a structure larger than a
    /// pointer, one shared place, so a value set on either is the other's too (MPI.NET's; a smaller value is copied,
    /// as a C attribute holds it).
    /// </summary>
    Shallow,
    /// <summary>The new communicator holds a copy: <see cref="ICloneable.Clone"/> for objects, the value itself for value types.</summary>
    Deep,
}

/// <summary>
/// A key for values kept on communicators (MPI_Comm_create_keyval), created with the type of its values and how they
/// are duplicated; index <see cref="Communicator.Attributes"/> with it.
/// </summary>
#pragma warning disable CA1711 // MPI.NET's name for the key, which ported programs use
public class Attribute
#pragma warning restore CA1711
{
    private protected Attribute(Type valueType, AttributeDuplication duplication, bool sharesPlace)
    {
        ValueType = valueType;
        Duplication = duplication;
        SharesPlace = sharesPlace;
    }

    /// <summary>How a value is carried by <see cref="Communicator.Clone"/>.</summary>
    public AttributeDuplication Duplication { get; }

    /// <summary>The type of the values stored under this key.</summary>
    public Type ValueType { get; }

    /// <summary>A new key for values of <typeparamref name="T"/>.</summary>
    /// <exception cref="ArgumentException">Deep duplication of a reference type that is not <see cref="ICloneable"/>.</exception>
    public static Attribute Create<T>(AttributeDuplication duplication)
    {
        if (duplication == AttributeDuplication.Deep && !typeof(T).IsValueType && !typeof(ICloneable).IsAssignableFrom(typeof(T)))
            throw new ArgumentException($"Deep duplication copies values with ICloneable, which {typeof(T).FullName} does not implement.", nameof(duplication));
        bool sharesPlace = duplication == AttributeDuplication.Shallow && typeof(T).IsValueType && Unsafe.SizeOf<T>() > IntPtr.Size;
        return new Attribute(typeof(T), duplication, sharesPlace);
    }

    /// <summary>Whether communicators that share a value (<see cref="AttributeDuplication.Shallow"/>, a large structure) share its place too.</summary>
    internal bool SharesPlace { get; }

    internal object? Duplicate(object? value) => Duplication == AttributeDuplication.Deep && value is ICloneable cloneable ? cloneable.Clone() : value;
}

/// <summary>The attributes of one communicator (MPI_Comm_set_attr / get_attr / delete_attr).</summary>
public sealed class AttributeSet
{
    // A value, or for an attribute that shares its place (Attribute.SharesPlace) the box that duplicates share.
    private readonly Dictionary<Attribute, object?> _values = [];
    private readonly Lock _lock = new();

    internal AttributeSet()
    {
    }

    /// <summary>The value stored under <paramref name="attribute"/>, or null when none is; setting checks the value's type.</summary>
    public object? this[Attribute attribute]
    {
        get
        {
            ArgumentNullException.ThrowIfNull(attribute);
            lock (_lock)
            {
                var stored = _values.GetValueOrDefault(attribute);
                return attribute.SharesPlace && stored is StrongBox<object?> place ? place.Value : stored;
            }
        }
        set
        {
            ArgumentNullException.ThrowIfNull(attribute);
            if (value is not null && !attribute.ValueType.IsInstanceOfType(value))
                throw new ArgumentException($"The attribute holds {attribute.ValueType.FullName} values; {value.GetType().FullName} is not one.", nameof(value));
            lock (_lock)
            {
                if (!attribute.SharesPlace) _values[attribute] = value;
                else if (_values.GetValueOrDefault(attribute) is StrongBox<object?> place) place.Value = value;
                else _values[attribute] = new StrongBox<object?>(value);
            }
        }
    }

    /// <summary>Removes the value stored under <paramref name="attribute"/>, if any.</summary>
    public void Remove(Attribute attribute)
    {
        ArgumentNullException.ThrowIfNull(attribute);
        lock (_lock) _values.Remove(attribute);
    }

    internal void CopyFrom(AttributeSet source)
    {
        KeyValuePair<Attribute, object?>[] entries;
        lock (source._lock) entries = [.. source._values];
        lock (_lock)
            foreach (var (attribute, value) in entries)
                if (attribute.Duplication != AttributeDuplication.None) _values[attribute] = attribute.SharesPlace ? value : attribute.Duplicate(value);
    }
}
