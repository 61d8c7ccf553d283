using Pmpi.Matching;

namespace Pmpi;

/// <summary>
/// A message a matched probe took out of matching (MPI_Message, from <see cref="Communicator.MatchedProbe"/>): its
/// <see cref="Status"/> before it is received, and one receive of it (MPI_Mrecv). Threads that share a communicator
/// thus probe and receive without another thread's receive taking the message in between.
/// </summary>
public sealed class MatchedMessage
{
    private readonly Communicator _comm;
    private Message? _message;
    private readonly bool _fromProcNull;

    internal MatchedMessage(Communicator comm, Message? message)
    {
        _comm = comm;
        _message = message;
        _fromProcNull = message is null;
        Status = message is null ? new CompletedStatus(Communicator.ProcNull, Communicator.AnyTag, default, 0, 0, false) : Communicator.MatchedStatus(message);
    }

    /// <summary>The message's source, tag and size (the status MPI_Mprobe gives).</summary>
    public Status Status { get; }

    /// <summary>Receives the message as a <typeparamref name="T"/> (MPI_Mrecv); default from <see cref="Communicator.ProcNull"/>.</summary>
    /// <exception cref="MpiException">The message was received already, or is not a <typeparamref name="T"/>.</exception>
    public T Receive<T>() => Receive<T>(out _);

    /// <summary>Receives the message and reports its status, with the count of what arrived.</summary>
    public T Receive<T>(out CompletedStatus status)
    {
        if (_fromProcNull)
        {
            status = (CompletedStatus)Status;
            return default!;
        }
        var message = Interlocked.Exchange(ref _message, null)
            ?? throw new MpiException(ErrorClass.InvalidArgument, $"The message from rank {Status.Source} with tag {Status.Tag} was received already; a matched message is received once.");
        return _comm.ReceiveMatched<T>(message, out status);
    }
}
