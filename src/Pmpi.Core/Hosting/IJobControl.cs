namespace Pmpi.Hosting;

/// <summary>
/// A rank's line to whatever runs its job (the master, or the process its threads share), apart from the links that
/// move its messages.
/// </summary>
internal interface IJobControl
{
    /// <summary>Aborts the whole job: every rank's pending and later operations fail with <paramref name="reason"/>.</summary>
    void Abort(MpiException reason);
}
