using Pmpi.Hosting;

namespace Pmpi.Devices;

/// <summary>
/// The ranks of a job run as threads of this process, each on its own device. The in-process device is one; the
/// tests run the same MPI semantics over loopback gRPC with another.
/// </summary>
internal interface IThreadedJob : IDisposable
{
    /// <summary>Number of ranks.</summary>
    int Size { get; }

    /// <summary>The device of <paramref name="rank"/> and its job control; called once, on that rank's thread.</summary>
    (IDevice Device, IJobControl Control) Start(int rank);

    /// <summary>Fails every rank's pending and later operations with <paramref name="reason"/>.</summary>
    void Abort(MpiException reason);
}
