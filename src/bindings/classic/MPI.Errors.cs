namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Error classes (MPI-4.1 §9.4; MPICH's values) ----

    /// <summary>A count argument is wrong, or a buffer does not fit it (<see cref="ErrorClass.InvalidCount"/>).</summary>
    public const int MPI_ERR_COUNT = 2;

    /// <summary>A datatype does not match the buffer or the message (<see cref="ErrorClass.TypeMismatch"/>).</summary>
    public const int MPI_ERR_TYPE = 3;

    /// <summary>A tag is negative or reserved (<see cref="ErrorClass.InvalidTag"/>).</summary>
    public const int MPI_ERR_TAG = 4;

    /// <summary>A communicator is freed or not the caller's (<see cref="ErrorClass.InvalidCommunicator"/>).</summary>
    public const int MPI_ERR_COMM = 5;

    /// <summary>A rank is outside the communicator (<see cref="ErrorClass.InvalidRank"/>).</summary>
    public const int MPI_ERR_RANK = 6;

    /// <summary>Another argument is wrong, or the ranks of a collective disagree (<see cref="ErrorClass.InvalidArgument"/>, <see cref="ErrorClass.CollectiveMismatch"/>).</summary>
    public const int MPI_ERR_ARG = 12;

    /// <summary>A message was longer than the receive buffer (<see cref="ErrorClass.Truncate"/>).</summary>
    public const int MPI_ERR_TRUNCATE = 14;

    /// <summary>
    /// A request cannot be used so (<see cref="ErrorClass.InvalidRequest"/>): MPI_REQUEST_NULL started or freed, a
    /// started persistent request started again, a collective's request cancelled or freed before it completes.
    /// </summary>
    public const int MPI_ERR_REQUEST = 19;

    /// <summary>The job was aborted, the transport failed, or a payload could not be (de)serialized.</summary>
    public const int MPI_ERR_OTHER = 15;

    /// <summary>Ranks could not be spawned (<see cref="ErrorClass.Spawn"/>).</summary>
    public const int MPI_ERR_SPAWN = 42;

    private static readonly Dictionary<int, string> ErrorStrings = new()
    {
        [MPI_SUCCESS] = "No error",
        [MPI_ERR_COUNT] = "Invalid count: a count does not fit its buffer or the operation",
        [MPI_ERR_TYPE] = "Invalid datatype: it does not match the buffer or the message",
        [MPI_ERR_TAG] = "Invalid tag: tags are non-negative, or MPI_ANY_TAG for a receive",
        [MPI_ERR_COMM] = "Invalid communicator: freed, or not one the caller belongs to",
        [MPI_ERR_RANK] = "Invalid rank: outside the communicator",
        [MPI_ERR_ARG] = "Invalid argument, or ranks of one collective passed different arguments",
        [MPI_ERR_TRUNCATE] = "Message truncated: longer than the receive buffer",
        [MPI_ERR_REQUEST] = "Invalid request: null, active where it must be inactive, or a collective's, which only completion ends",
        [MPI_ERR_OTHER] = "Other error: the job was aborted, the transport failed, or a payload could not be serialized",
        [MPI_ERR_SPAWN] = "Ranks could not be spawned",
    };

    /// <summary>The class of an error code; PMPI's codes are their classes.</summary>
    public static int MPI_Error_class(int errorcode, out int errorclass)
    {
        if (!ErrorStrings.ContainsKey(errorcode))
            throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Error_class: {errorcode} is not an MPI error code.");
        errorclass = errorcode;
        return MPI_SUCCESS;
    }

    /// <summary>The MPI error class of an error raised as <paramref name="error"/>, for a catch block that tells them apart.</summary>
    public static int MPI_Error_class(MpiException error, out int errorclass)
    {
        ArgumentNullException.ThrowIfNull(error);
        errorclass = error.ErrorClass switch
        {
            ErrorClass.Truncate => MPI_ERR_TRUNCATE,
            ErrorClass.TypeMismatch => MPI_ERR_TYPE,
            ErrorClass.InvalidRank => MPI_ERR_RANK,
            ErrorClass.InvalidTag => MPI_ERR_TAG,
            ErrorClass.InvalidCommunicator => MPI_ERR_COMM,
            ErrorClass.InvalidArgument or ErrorClass.CollectiveMismatch => MPI_ERR_ARG,
            ErrorClass.InvalidCount => MPI_ERR_COUNT,
            ErrorClass.InvalidRequest => MPI_ERR_REQUEST,
            ErrorClass.Spawn => MPI_ERR_SPAWN,
            _ => MPI_ERR_OTHER,
        };
        return MPI_SUCCESS;
    }

    /// <summary>What an error code means, and its length.</summary>
    public static int MPI_Error_string(int errorcode, out string @string, out int resultlen)
    {
        @string = ErrorStrings.TryGetValue(errorcode, out var text)
            ? text
            : throw new MpiException(ErrorClass.InvalidArgument, $"MPI_Error_string: {errorcode} is not an MPI error code.");
        resultlen = @string.Length;
        return MPI_SUCCESS;
    }
}
