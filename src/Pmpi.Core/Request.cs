using System.Runtime.ExceptionServices;
using Pmpi.Devices;
using Pmpi.Matching;

namespace Pmpi;

/// <summary>A nonblocking operation in progress (MPI_Request): wait for it, test it, or cancel it.</summary>
public abstract class Request
{
    private protected Request()
    {
    }

    /// <summary>Blocks until the operation completes and returns its status.</summary>
    public abstract CompletedStatus Wait();

    /// <summary>The status if the operation has completed, otherwise null (MPI_Test). Never blocks.</summary>
    public abstract CompletedStatus? Test();

    /// <summary>
    /// Cancels the operation if it has not matched yet (MPI_Cancel); a cancelled request still completes, and its
    /// status says <see cref="CompletedStatus.Cancelled"/>. Sends are not cancellable (deprecated since MPI-4.0).
    /// </summary>
    public abstract void Cancel();

    /// <summary>Completes when the operation does, without blocking a thread (PMPI addition).</summary>
    public async Task<CompletedStatus> WaitAsync(CancellationToken cancellationToken = default)
    {
        Expedite();
        await Completion.AsTask().WaitAsync(cancellationToken).ConfigureAwait(false);
        return Wait();
    }

    internal abstract Completion Completion { get; }

    /// <summary>
    /// Tells the operation that the program waits for it without running it (a test, an await, a wait for any of
    /// several): a nonblocking collective then starts at once on its worker rather than after its grace.
    /// </summary>
    internal virtual void Expedite()
    {
    }

    /// <summary>Rethrows a transport or abort error on the waiting rank's own thread, with its class.</summary>
    internal static void ThrowIfFailed(Completion completion)
    {
        if (completion.Error is MpiException error) throw new MpiException(error.ErrorClass, error.Message, error);
        if (completion.Error is { } other) throw new MpiException(ErrorClass.Transport, other.Message, other);
    }
}

/// <summary>A nonblocking send; completes when the send buffer may be reused.</summary>
internal sealed class SendRequest(SendOperation operation, int destination, int tag, MatchingEngine engine) : Request
{
    internal override Completion Completion => operation;

    public override CompletedStatus Wait()
    {
        operation.Wait(engine);
        return Status();
    }

    public override CompletedStatus? Test()
    {
        // As a receive's test: a test loop makes the progress a wait would (a lent payload's acknowledgement).
        if (!operation.IsCompleted) engine.Progress?.Poll();
        return operation.IsCompleted ? Status() : null;
    }

    public override void Cancel()
    {
    }

    private CompletedStatus Status()
    {
        ThrowIfFailed(operation);
        return new CompletedStatus(destination, tag, default, 0, 0, cancelled: false);
    }
}

/// <summary>A nonblocking receive; after completion <see cref="GetValue"/> returns what was received.</summary>
public abstract class ReceiveRequest : Request
{
    private protected ReceiveRequest()
    {
    }

    /// <summary>The received value (for a receive into an array, that array). Waits for completion first.</summary>
    public abstract object? GetValue();
}

/// <summary>A nonblocking receive of a <typeparamref name="T"/> (PMPI addition: typed access to the value).</summary>
public sealed class ReceiveRequest<T> : ReceiveRequest
{
    private readonly MatchingEngine _engine;
    private readonly ReceiveOperation _operation;
    private readonly Func<Message, (T Value, int Count)> _decode;
    private CompletedStatus? _status;
    private T _value = default!;
    private Exception? _decodeError;

    internal ReceiveRequest(MatchingEngine engine, ReceiveOperation operation, Func<Message, (T, int)> decode)
    {
        _engine = engine;
        _operation = operation;
        _decode = decode;
    }

    internal override Completion Completion => _operation;

    /// <summary>The received value; waits for completion first.</summary>
    public T Value
    {
        get
        {
            Wait();
            return _value;
        }
    }

    /// <inheritdoc/>
    public override object? GetValue() => Value;

    /// <inheritdoc/>
    public override CompletedStatus Wait()
    {
        _operation.Wait(_engine);
        return Finish();
    }

    /// <inheritdoc/>
    public override CompletedStatus? Test()
    {
        // A test loop is a wait in the program's own hands: it makes the same progress (MatchingEngine.Progress).
        if (!_operation.IsCompleted) _engine.Progress?.Poll();
        return _operation.IsCompleted ? Finish() : null;
    }

    /// <inheritdoc/>
    public override void Cancel() => _engine.Cancel(_operation);

    // Decoding runs once, on the thread that first waits, so the payload is copied by the receiver, not the sender.
    private CompletedStatus Finish()
    {
        lock (_operation)
        {
            if (_decodeError is not null) ExceptionDispatchInfo.Throw(_decodeError);
            if (_status is not null) return _status;
            ThrowIfFailed(_operation);
            var pattern = _operation.Pattern;
            if (_operation.Cancelled) return _status = CompletedStatus.ForCancelled(pattern.Source, pattern.Tag);
            var message = _operation.Message!;
            try
            {
                (_value, int count) = _decode(message);
                return _status = new CompletedStatus(message.Envelope.Source, message.Envelope.Tag, message.Type, message.Payload.Length, count, false);
            }
            catch (Exception e)
            {
                _decodeError = e;
                throw;
            }
        }
    }
}
