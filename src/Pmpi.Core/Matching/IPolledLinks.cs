namespace Pmpi.Matching;

/// <summary>
/// A rank's links that move a message only when a thread of the rank reads them (shared memory): a thread waiting
/// for the rank polls them while it spins, so a message reaches it without a hand-off from another thread.
/// </summary>
internal interface IPolledLinks
{
    /// <summary>Reads what has arrived, on the calling thread.</summary>
    void Poll();

    /// <summary>The calling thread stops polling to sleep: whoever else reads the links must not leave them to it.</summary>
    void Sleeping();
}
