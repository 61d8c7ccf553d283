namespace Pmpi.Payloads;

/// <summary>How a payload is encoded, carried in every message so a receiver can detect a type mismatch.</summary>
internal enum PayloadCode : byte
{
    Byte = 1, SByte, Int16, UInt16, Int32, UInt32, Int64, UInt64, Single, Double, Boolean, Char, Decimal, Half,
    /// <summary>A user unmanaged struct, copied as raw bytes; its type name travels with it.</summary>
    Struct,
    /// <summary>UTF-8 text.</summary>
    String,
    /// <summary>Bytes from the job's <see cref="IPayloadSerializer"/>; the type name travels with them.</summary>
    Serialized,
    /// <summary>A [Serializable] type written field by field (Payloads/Internal/FieldWriter); the type name travels with it.</summary>
    Fields,
}

/// <summary>
/// A payload's type: its code, whether it is an array of elements of that code (raw types only), and for structs and
/// serialized objects the sender's type name. Raw payloads are little-endian (every .NET platform PMPI targets is).
/// </summary>
internal readonly record struct PayloadType(PayloadCode Code, bool IsArray, string? TypeName)
{
    // By hand: the generated equality goes through EqualityComparer<PayloadCode>, whose code a ReadyToRun rank would
    // compile at its first receive (every receive checks the type).
    public bool Equals(PayloadType other) => Code == other.Code && IsArray == other.IsArray && TypeName == other.TypeName;

    public override int GetHashCode() => HashCode.Combine((int)Code, IsArray, TypeName);

    public override string ToString()
    {
        var element = Code switch
        {
            PayloadCode.Struct or PayloadCode.Serialized or PayloadCode.Fields => TypeName ?? "?",
            PayloadCode.String => "string",
            _ => Code.ToString(),
        };
        return IsArray ? element + "[]" : element;
    }
}
