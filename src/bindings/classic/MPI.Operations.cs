namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- User operations ----

    /// <summary>
    /// A reduction of <typeparamref name="T"/> elements that applies <paramref name="function"/>, for MPI_Reduce,
    /// MPI_Allreduce, MPI_Scan and the rest. Reductions always combine in rank order, so a non-commutative
    /// <paramref name="function"/> gives the result MPI specifies whatever <paramref name="commute"/> says. C# infers
    /// no element type from a method, so name it: <c>MPI_Op_create&lt;double&gt;(MyOp, true, out var op)</c>.
    /// </summary>
    public static int MPI_Op_create<T>(MPI_User_function<T> function, bool commute, out MPI_Op op)
    {
        ArgumentNullException.ThrowIfNull(function);
        op = new MPI_Op($"MPI_Op_create({typeof(T).Name})", commute, isPredefined: false, (type, datatype, call) => type == typeof(T)
            ? (ReductionOperation<T>)new UserOperation<T>(function, datatype).Combine
            : throw new MpiException(ErrorClass.TypeMismatch, $"{call}: the operation was created for {typeof(T).Name} but the buffer holds {type.Name}."));
        return MPI_SUCCESS;
    }

    /// <summary>Frees a user's operation and sets <paramref name="op"/> to MPI_OP_NULL; the predefined ones cannot be freed.</summary>
    public static int MPI_Op_free(ref MPI_Op? op)
    {
        ArgumentNullException.ThrowIfNull(op);
        if (op.IsPredefined) throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Op_free: {op} is predefined and cannot be freed.");
        op.Free();
        op = MPI_OP_NULL;
        return MPI_SUCCESS;
    }

    /// <summary>Whether <paramref name="op"/> commutes: true for the predefined ones, as declared to MPI_Op_create for a user's.</summary>
    public static int MPI_Op_commutative(MPI_Op op, out bool commute)
    {
        ArgumentNullException.ThrowIfNull(op);
        commute = op.IsCommutative;
        return MPI_SUCCESS;
    }
}
