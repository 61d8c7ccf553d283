namespace Pmpi.Matching;

/// <summary>
/// A rank's links that move a message only when a thread of the rank reads them (shared memory): a thread waiting
/// for the rank polls them while it spins, so a message reaches it without a hand-off from another thread.
/// </summary>
internal interface IPolledLinks
{
    /// <summary>Reads what has arrived, on the calling thread.</summary>
    void Poll();

    /// <summary>
    /// Whether another thread is reading a large message in from these links: a thread waiting for it stops
    /// spinning, which would only take the core that one copies on, and blocks until the message completes it.
    /// </summary>
    bool Delivering { get; }

    /// <summary>The calling thread stops polling to sleep: whoever else reads the links must not leave them to it.</summary>
    void Sleeping();

    /// <summary>
    /// Sleeps the calling thread, which waits for <paramref name="completion"/>, on the links themselves for a while,
    /// reading what arrives, so that a message wakes the one thread that waits for it; whether
    /// <paramref name="completion"/> completed. If not (or where the links cannot be slept on), the caller says it
    /// is <see cref="Sleeping"/> and blocks.
    /// </summary>
    bool SleepOn(Completion completion);
}
