using System.Buffers;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Devices.InProcess;

/// <summary>
/// The shared-memory device of ranks that are threads of one process (MPJ Express's multicore device): a send is a
/// call into the receiver's matching engine. Small messages are copied into a pooled buffer and the send completes
/// at once; large ones are copied once, straight from the sender's array into the receiver's, with the sender held
/// until then (rendezvous).
/// </summary>
internal sealed class InProcessJob : IThreadedJob
{
    /// <summary>Messages up to this size are buffered (eager); larger ones wait for their receive.</summary>
    public const int EagerLimit = 64 * 1024;

    private readonly MatchingEngine[] _engines;

    public InProcessJob(int size)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        _engines = new MatchingEngine[size];
        for (int i = 0; i < size; i++) _engines[i] = new MatchingEngine();
    }

    public int Size => _engines.Length;

    public IDevice DeviceFor(int rank) => new Device(this, rank);

    public void Abort(MpiException reason)
    {
        foreach (var engine in _engines) engine.Abort(reason);
    }

    public void Dispose()
    {
    }

    private sealed class Device(InProcessJob job, int rank) : IDevice
    {
        public int Rank => rank;

        public int Size => job.Size;

        public MatchingEngine Engine => job._engines[rank];

        public string ProcessorName => System.Environment.MachineName;

        public SendOperation Send(int destination, Envelope envelope, OutgoingPayload payload, bool synchronous)
        {
            var target = job._engines[destination];
            // A send to oneself is always buffered: MPI programs may send to themselves before receiving.
            if (!synchronous && (payload.Bytes.Length <= EagerLimit || destination == rank))
            {
                target.Deliver(BufferedMessage.Of(envelope, payload));
                return SendOperation.Done;
            }
            var operation = new SendOperation();
            target.Deliver(new Message(envelope, payload.Type, payload.Bytes, payload.Rented, operation));
            return operation;
        }

        public void Abort(MpiException reason) => job.Abort(reason);

        public void Dispose()
        {
        }
    }
}
