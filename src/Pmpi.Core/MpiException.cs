namespace Pmpi;

/// <summary>The MPI error classes PMPI reports (MPI-4.1 §9.4, a subset with the same meanings).</summary>
public enum ErrorClass
{
    /// <summary>A message was longer than the buffer it was received into (MPI_ERR_TRUNCATE).</summary>
    Truncate,
    /// <summary>The receiver expected another type than the sender sent (MPI_ERR_TYPE).</summary>
    TypeMismatch,
    /// <summary>A rank argument is outside the communicator (MPI_ERR_RANK).</summary>
    InvalidRank,
    /// <summary>A tag argument is negative or reserved (MPI_ERR_TAG).</summary>
    InvalidTag,
    /// <summary>A communicator is unusable: disposed, or not one the caller belongs to (MPI_ERR_COMM).</summary>
    InvalidCommunicator,
    /// <summary>An argument other than rank, tag or communicator is wrong (MPI_ERR_ARG).</summary>
    InvalidArgument,
    /// <summary>A buffer or count does not fit the operation, e.g. scatter data not divisible by size (MPI_ERR_COUNT).</summary>
    InvalidCount,
    /// <summary>The job was aborted, by a rank's call to Abort or by a failing rank (MPI_ERR_OTHER after MPI_Abort).</summary>
    Aborted,
    /// <summary>The transport failed: a peer disconnected or sent a malformed frame (MPI_ERR_OTHER).</summary>
    Transport,
    /// <summary>A payload could not be serialized or deserialized (MPI_ERR_OTHER).</summary>
    Serialization,
    /// <summary>Ranks could not be spawned: no such program, no master to start them, or they failed to start (MPI_ERR_SPAWN).</summary>
    Spawn,
    /// <summary>
    /// Ranks of one collective passed different roots, operations, counts or types, or called different collectives
    /// (MPI leaves such a program erroneous; implementations that check arguments report MPI_ERR_ARG).
    /// </summary>
    CollectiveMismatch,
    /// <summary>A request was used as it cannot be: a persistent request started while active, a collective cancelled (MPI_ERR_REQUEST).</summary>
    InvalidRequest,
}

/// <summary>An MPI error raised to the program, carrying its <see cref="ErrorClass"/>.</summary>
public class MpiException : Exception
{
    /// <summary>Creates an exception of the given class.</summary>
    public MpiException(ErrorClass errorClass, string message, Exception? innerException = null)
        : base(message, innerException) => ErrorClass = errorClass;

    /// <summary>What kind of MPI error this is.</summary>
    public ErrorClass ErrorClass { get; }

    /// <summary>The code a rank passed to Abort, when this error reports that call; otherwise null.</summary>
    public int? AbortCode { get; init; }
}

/// <summary>
/// A message was longer than the buffer it was received into (MPI_ERR_TRUNCATE): an <see cref="MpiException"/> of
/// class <see cref="ErrorClass.Truncate"/>, named as MPI.NET names it so a ported catch block still catches it.
/// </summary>
public class MessageTruncatedException : MpiException
{
    /// <summary>Creates the exception; <paramref name="message"/> names the rank, tag and sizes.</summary>
    public MessageTruncatedException(string message, Exception? innerException = null)
        : base(ErrorClass.Truncate, message, innerException)
    {
    }
}
