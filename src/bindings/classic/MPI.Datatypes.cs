namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Derived datatypes ----

    /// <summary>No datatype: what MPI_Type_free leaves.</summary>
    public static readonly MPI_Datatype? MPI_DATATYPE_NULL;

    /// <summary><paramref name="count"/> consecutive items of <paramref name="oldtype"/> as one item.</summary>
    public static int MPI_Type_contiguous(int count, MPI_Datatype oldtype, out MPI_Datatype newtype)
    {
        CheckDerivable(count, oldtype, nameof(MPI_Type_contiguous));
        var offsets = new int[count * oldtype.Size];
        for (int i = 0, at = 0; i < count; i++)
            for (int k = 0; k < oldtype.Size; k++) offsets[at++] = oldtype.Offset(i, k);
        newtype = oldtype.Derive($"MPI_Type_contiguous({count}, {oldtype.Name})", offsets, count * oldtype.Extent);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// <paramref name="count"/> blocks of <paramref name="blocklength"/> items of <paramref name="oldtype"/>, each
    /// block starting <paramref name="stride"/> items after the previous one: a column of a row-major matrix of n
    /// columns is MPI_Type_vector(rows, 1, n, ...).
    /// </summary>
    public static int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, out MPI_Datatype newtype)
    {
        CheckDerivable(count, oldtype, nameof(MPI_Type_vector));
        if (blocklength < 0 || stride < blocklength)
            throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Type_vector: blocks of {blocklength} items {stride} apart; PMPI takes non-negative block lengths and strides no shorter than a block.");
        var offsets = new int[count * blocklength * oldtype.Size];
        int at = 0;
        for (int block = 0; block < count; block++)
            for (int i = 0; i < blocklength; i++)
                for (int k = 0; k < oldtype.Size; k++) offsets[at++] = oldtype.Offset(block * stride + i, k);
        int extent = count == 0 ? 0 : ((count - 1) * stride + blocklength) * oldtype.Extent;
        newtype = oldtype.Derive($"MPI_Type_vector({count}, {blocklength}, {stride}, {oldtype.Name})", offsets, extent);
        return MPI_SUCCESS;
    }

    /// <summary>Makes a derived datatype usable in communication.</summary>
    public static int MPI_Type_commit(ref MPI_Datatype datatype)
    {
        ArgumentNullException.ThrowIfNull(datatype);
        datatype.IsCommitted = true;
        return MPI_SUCCESS;
    }

    /// <summary>Frees a derived datatype and sets <paramref name="datatype"/> to MPI_DATATYPE_NULL; the predefined ones cannot be freed.</summary>
    public static int MPI_Type_free(ref MPI_Datatype? datatype)
    {
        ArgumentNullException.ThrowIfNull(datatype);
        if (datatype.Offsets is null) throw new MpiException(ErrorClass.TypeMismatch, $"MPI_Type_free: {datatype} is predefined and cannot be freed.");
        datatype.IsFreed = true;
        datatype = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
    }

    private static void CheckDerivable(int count, MPI_Datatype oldtype, string call)
    {
        ArgumentNullException.ThrowIfNull(oldtype);
        if (count < 0) throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} is negative.");
        if (oldtype.IsFreed) throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the datatype {oldtype} was freed by MPI_Type_free.");
    }

    // ---- Packing: a derived datatype's elements travel as one contiguous array ----

    /// <summary>The elements <paramref name="count"/> items of <paramref name="datatype"/> take from <paramref name="buf"/>, in order.</summary>
    private static T[] Packed<T>(T[] buf, int count, MPI_Datatype datatype, string call)
    {
        if (datatype?.Offsets is null) return Prefix(buf, count, datatype!, call);
        CheckSpan(buf, count, datatype, call);
        var packed = new T[count * datatype.Size];
        for (int item = 0, at = 0; item < count; item++)
            for (int k = 0; k < datatype.Size; k++) packed[at++] = buf[datatype.Offset(item, k)];
        return packed;
    }

    /// <summary>Checks what <see cref="Packed"/> takes, for a persistent send that packs the buffer at each start.</summary>
    private static void CheckPacked<T>(T[] buf, int count, MPI_Datatype datatype, string call)
    {
        if (datatype?.Offsets is null) CheckPrefix(buf, count, datatype!, call);
        else CheckSpan(buf, count, datatype, call);
    }

    /// <summary>Puts the first <paramref name="received"/> elements of <paramref name="packed"/> where <paramref name="datatype"/> places them in <paramref name="buf"/>.</summary>
    private static void Unpack<T>(T[] packed, int received, MPI_Datatype datatype, T[] buf)
    {
        for (int i = 0; i < received; i++) buf[datatype.Offset(i / datatype.Size, i % datatype.Size)] = packed[i];
    }

    /// <summary>
    /// The array a receive of <paramref name="count"/> items lands in, and what then brings its first elements into
    /// <paramref name="buf"/>: null when the receive lands in <paramref name="buf"/> itself, a copy to its front
    /// when the count is shorter, an unpacking for a derived datatype.
    /// </summary>
    private static T[] ReceiveTarget<T>(T[] buf, int count, MPI_Datatype datatype, string call, out Action<int>? deliver)
    {
        if (datatype?.Offsets is null)
        {
            var target = Prefix(buf, count, datatype!, call);
            deliver = ReferenceEquals(target, buf) ? null : received => Array.Copy(target, buf, received);
            return target;
        }
        CheckSpan(buf, count, datatype, call);
        var packed = new T[count * datatype.Size];
        deliver = received => Unpack(packed, received, datatype, buf);
        return packed;
    }

    private static void CheckSpan<T>(T[] buf, int count, MPI_Datatype datatype, string call)
    {
        ArgumentNullException.ThrowIfNull(buf);
        CheckElementType<T>(datatype, call);
        if (count < 0) throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} is negative.");
        if (count == 0 || datatype.Size == 0) return;
        long last = (long)(count - 1) * datatype.Extent + datatype.Offsets!.Max();
        if (last >= buf.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: {count} items of {datatype} reach element {last}, past the buffer of {buf.Length} elements.");
    }
}
