namespace Pmpi;

/// <summary>The level of thread support a program asks for and PMPI provides (MPI_THREAD_*; MPI.NET's <c>Threading</c>).</summary>
public enum Threading
{
    /// <summary>Only one thread will run (MPI_THREAD_SINGLE).</summary>
    Single,
    /// <summary>Only the thread that initialised calls PMPI (MPI_THREAD_FUNNELED).</summary>
    Funneled,
    /// <summary>Any thread may call PMPI, one at a time (MPI_THREAD_SERIALIZED); MPI.NET's default request.</summary>
    Serialized,
    /// <summary>Any thread may call PMPI at any time (MPI_THREAD_MULTIPLE).</summary>
    Multiple,
}
