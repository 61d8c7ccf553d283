using System.Runtime.CompilerServices;
using Pmpi.Collectives;
using Pmpi.Devices;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi;

/// <summary>
/// A group of ranks that talk in a context no other communicator sees (MPI_Comm). Point-to-point operations, Barrier,
/// Clone, Compare and attributes live here; <see cref="Intracommunicator"/> adds the collectives within one group and
/// the constructors of new communicators, <see cref="Intercommunicator"/> those between two groups.
/// </summary>
public abstract class Communicator : IDisposable
{
    /// <summary>Matches a message from any source (MPI_ANY_SOURCE).</summary>
    public const int AnySource = MatchingEngine.AnySource;

    /// <summary>Matches a message with any tag (MPI_ANY_TAG).</summary>
    public const int AnyTag = MatchingEngine.AnyTag;

    /// <summary>
    /// A rank that is no rank (MPI_PROC_NULL), e.g. a neighbour off the edge of a non-periodic grid: a blocking send
    /// to it does nothing and a blocking receive from it returns default at once.
    /// </summary>
    public const int ProcNull = -2;

    /// <summary>The largest tag a program may use (MPI_TAG_UB).</summary>
    public const int MaxTag = int.MaxValue;

#pragma warning disable CA1707, CA1708, IDE1006 // MPI.NET's spellings, which ported programs use
    /// <summary>The same as <see cref="AnySource"/> (MPI.NET's name).</summary>
    public const int anySource = AnySource;

    /// <summary>The same as <see cref="AnyTag"/> (MPI.NET's name).</summary>
    public const int anyTag = AnyTag;
#pragma warning restore CA1707, CA1708, IDE1006

    private readonly int[] _members;
    private readonly int[] _peers;
    private bool _disposed;

    /// <param name="runtime">The rank's runtime.</param>
    /// <param name="context">The point-to-point context; the collective one is the next.</param>
    /// <param name="members">The world ranks of the calling rank's group.</param>
    /// <param name="rank">The calling rank's index in <paramref name="members"/>.</param>
    /// <param name="peers">The world ranks that point-to-point ranks name: the remote group of an intercommunicator; else the members.</param>
    /// <param name="sequence">The order of collectives this communicator's take part in: its own, unless it is a level of a hierarchical one.</param>
    private protected Communicator(RankRuntime runtime, int context, int[] members, int rank, int[]? peers = null, CollectiveSequence? sequence = null)
    {
        Runtime = runtime;
        Sequence = sequence ?? new CollectiveSequence();
        Context = context;
        _members = members;
        _peers = peers ?? members;
        Rank = rank;
        runtime.MarkContextUsed(context);
    }

    /// <summary>All ranks of the job (MPI_COMM_WORLD) as seen by the calling rank.</summary>
    public static Intracommunicator World => CurrentRuntime.World;

    /// <summary>The calling rank alone (MPI_COMM_SELF).</summary>
    public static Intracommunicator Self => CurrentRuntime.Self;

#pragma warning disable CA1708, IDE1006 // MPI.NET's spelling, which ported programs use; World and Self are the same communicators.
    /// <summary>The same as <see cref="World"/> (MPI.NET's name).</summary>
    public static Intracommunicator world => World;

    /// <summary>The same as <see cref="Self"/> (MPI.NET's name).</summary>
    public static Intracommunicator self => Self;
#pragma warning restore CA1708, IDE1006

    /// <summary>
    /// The intercommunicator to the ranks that spawned the calling rank's world (MPI_Comm_get_parent; see
    /// <see cref="Intracommunicator.Spawn"/>), the same from any communicator; null when its world was not spawned,
    /// or once the program disposed it.
    /// </summary>
    public Intercommunicator? Parent => Runtime.Parent is { _disposed: false } parent ? parent : null;

    /// <summary>The calling rank's rank in this communicator, from 0 to <see cref="Size"/> - 1.</summary>
    public int Rank { get; }

    /// <summary>The number of ranks in this communicator.</summary>
    public int Size => _members.Length;

    /// <summary>The ranks of this communicator, as a group.</summary>
    public Group Group => new(_members);

    internal RankRuntime Runtime { get; }

    internal int Context { get; }

    /// <summary>Collective traffic has its own context, so it never matches a user's point-to-point receive.</summary>
    internal int CollectiveContext => Context + 1;

    /// <summary>The order of this communicator's collectives, blocking and nonblocking, which its collective traffic keeps.</summary>
    internal CollectiveSequence Sequence { get; }

    internal ReadOnlySpan<int> Members => _members;

    /// <summary>Values kept on this communicator by key, copied by <see cref="Clone"/> as each key's duplication says.</summary>
    public AttributeSet Attributes { get; } = new();

    private static RankRuntime CurrentRuntime => RankRuntime.Current ?? throw new MpiException(ErrorClass.InvalidCommunicator, Environment.Finalized
        ? "PMPI was finalized on this rank (its Environment was disposed); MPI allows no communication after MPI_Finalize."
        : "PMPI is not initialised on this thread: run the program inside Pmpi.Environment.Run(...) or after new Pmpi.Environment(ref args).");

    // ---- Blocking sends ----

    /// <summary>Sends <paramref name="value"/> to rank <paramref name="dest"/> with <paramref name="tag"/> (MPI_Send).</summary>
    public void Send<T>(T value, int dest, int tag) => Complete(StartSend(value, dest, tag, Context, synchronous: false));

    /// <summary>Sends an array; primitives and unmanaged structs travel as raw bytes (MPI_Send).</summary>
    public void Send<T>(T[] values, int dest, int tag) => Send<T[]>(values, dest, tag);

    /// <summary>Sends and returns only once the receiver has matched the message (MPI_Ssend).</summary>
    public void Ssend<T>(T value, int dest, int tag) => Complete(StartSend(value, dest, tag, Context, synchronous: true));

    /// <summary>Sends an array synchronously (MPI_Ssend).</summary>
    public void Ssend<T>(T[] values, int dest, int tag) => Ssend<T[]>(values, dest, tag);

    // ---- Blocking receives ----

    /// <summary>Receives a value from <paramref name="source"/> (or <see cref="AnySource"/>) with <paramref name="tag"/> (or <see cref="AnyTag"/>).</summary>
    public T Receive<T>(int source, int tag) => ReceiveWithStatus<T>(source, tag, out _);

    /// <summary>Receives a value into <paramref name="value"/>.</summary>
    public void Receive<T>(int source, int tag, out T value) => value = ReceiveWithStatus<T>(source, tag, out _);

    /// <summary>Receives a value into <paramref name="value"/> and reports the message's status.</summary>
    public void Receive<T>(int source, int tag, out T value, out CompletedStatus status) => value = ReceiveWithStatus<T>(source, tag, out status);

    private T ReceiveWithStatus<T>(int source, int tag, out CompletedStatus status)
    {
        if (source == ProcNull)
        {
            status = new CompletedStatus(ProcNull, AnyTag, default, 0, 0, false);
            return default!;
        }
        var message = ReceiveMessage(source, tag, Context, Codec<T>.Instance.ReturnsNewArray);
        var value = Decode<T>(message, Context);
        status = new CompletedStatus(message.Envelope.Source, message.Envelope.Tag, message.Type, message.Payload.Length, CountOf(value), false);
        return value;
    }

    /// <summary>
    /// Receives an array into <paramref name="values"/>, which is allocated when null; a message longer than the
    /// array throws <see cref="ErrorClass.Truncate"/>, a shorter one fills its front (see the status' count).
    /// </summary>
    public void Receive<T>(int source, int tag, ref T[] values)
    {
        if (source == ProcNull) return;
        DecodeInto(ReceiveMessage(source, tag, Context, returnsNewArray: IsNull(values), ReceiveTarget.Of(values)), Context, ref values);
    }

    /// <summary>Receives an array into <paramref name="values"/> and reports the status.</summary>
    public void Receive<T>(int source, int tag, ref T[] values, out CompletedStatus status)
    {
        if (source == ProcNull)
        {
            status = new CompletedStatus(ProcNull, AnyTag, default, 0, 0, false);
            return;
        }
        var message = ReceiveMessage(source, tag, Context, returnsNewArray: IsNull(values), ReceiveTarget.Of(values));
        int count = DecodeInto(message, Context, ref values);
        status = new CompletedStatus(message.Envelope.Source, message.Envelope.Tag, message.Type, message.Payload.Length, count, false);
    }

    /// <summary>Receives asynchronously, without blocking a thread (PMPI addition).</summary>
    public async Task<T> ReceiveAsync<T>(int source, int tag, CancellationToken cancellationToken = default)
    {
        var request = ImmediateReceive<T>(source, tag);
        try
        {
            await request.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            request.Cancel();
            throw;
        }
        return request.Value;
    }

    // ---- Combined ----

    /// <summary>Sends to <paramref name="dest"/> and receives from <paramref name="source"/> without deadlock (MPI_Sendrecv).</summary>
    public TReceive SendReceive<TSend, TReceive>(TSend value, int dest, int sendTag, int source, int receiveTag, out CompletedStatus status)
    {
        var send = StartSend(value, dest, sendTag, Context, synchronous: false);
        var received = ReceiveWithStatus<TReceive>(source, receiveTag, out status);
        Complete(send);
        return received;
    }

    /// <summary>Exchanges values with one partner using one tag (MPI_Sendrecv).</summary>
    public T SendReceive<T>(T value, int partner, int tag) => SendReceive<T, T>(value, partner, tag, partner, tag, out _);

    /// <summary>Sends <paramref name="inValue"/> and receives <paramref name="outValue"/> (MPI.NET's form).</summary>
    public void SendReceive<T>(T inValue, int dest, int tag, out T outValue) => outValue = SendReceive(inValue, dest, tag);

    /// <summary>Exchanges arrays with <paramref name="dest"/>, receiving into <paramref name="outValues"/> (allocated when null).</summary>
    public void SendReceive<T>(T[] inValues, int dest, int tag, ref T[] outValues) => SendReceive(inValues, dest, tag, dest, tag, ref outValues, out _);

    /// <summary>Sends an array to one rank and receives an array from another into <paramref name="outValues"/>.</summary>
    public void SendReceive<T>(T[] inValues, int dest, int sendTag, int source, int receiveTag, ref T[] outValues, out CompletedStatus status)
    {
        var send = StartSend(inValues, dest, sendTag, Context, synchronous: false);
        Receive(source, receiveTag, ref outValues, out status);
        Complete(send);
    }

    /// <summary>Sends to one rank and receives from another (MPI.NET's form).</summary>
    public void SendReceive<T>(T inValue, int dest, int sendTag, int source, int receiveTag, out T outValue, out CompletedStatus status) =>
        outValue = SendReceive<T, T>(inValue, dest, sendTag, source, receiveTag, out status);

    // ---- Nonblocking ----

    /// <summary>Starts a send (MPI_Isend); the value or array must not change until the request completes.</summary>
    public Request ImmediateSend<T>(T value, int dest, int tag) => new SendRequest(StartSend(value, dest, tag, Context, synchronous: false), dest, tag, Runtime.Device.Engine);

    /// <summary>Starts an array send (MPI_Isend).</summary>
    public Request ImmediateSend<T>(T[] values, int dest, int tag) => ImmediateSend<T[]>(values, dest, tag);

    /// <summary>Starts a synchronous send (MPI_Issend): completes once the receiver matched it.</summary>
    public Request ImmediateSsend<T>(T value, int dest, int tag) => new SendRequest(StartSend(value, dest, tag, Context, synchronous: true), dest, tag, Runtime.Device.Engine);

    /// <summary>Starts a receive of a value (MPI_Irecv).</summary>
    public ReceiveRequest<T> ImmediateReceive<T>(int source, int tag) =>
        new(Runtime.Device.Engine, PostReceive(source, tag, Context, Codec<T>.Instance.ReturnsNewArray), message =>
        {
            var value = Decode<T>(message, Context);
            return (value, CountOf(value));
        });

    /// <summary>Starts a receive that calls <paramref name="action"/> with the value once it completes, on the thread that waits or tests (MPI.NET's form).</summary>
    public ReceiveRequest<T> ImmediateReceive<T>(int source, int tag, Action<T> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        return new(Runtime.Device.Engine, PostReceive(source, tag, Context, Codec<T>.Instance.ReturnsNewArray), message =>
        {
            var value = Decode<T>(message, Context);
            action(value);
            return (value, CountOf(value));
        });
    }

    /// <summary>Starts a receive into <paramref name="values"/> (MPI_Irecv); the request's value is that array.</summary>
    public ReceiveRequest<T[]> ImmediateReceive<T>(int source, int tag, T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        return new(Runtime.Device.Engine, PostReceive(source, tag, Context, into: ReceiveTarget.Of(values)), message =>
        {
            var buffer = values;
            int count = DecodeInto(message, Context, ref buffer);
            return (buffer, count);
        });
    }

    // ---- Persistent point-to-point (MPI_Send_init, MPI_Recv_init): started again and again with PersistentRequest.Start ----

    /// <summary>A send of <paramref name="value"/> to start again and again (MPI_Send_init).</summary>
    public PersistentRequest PersistentSend<T>(T value, int dest, int tag)
    {
        CheckDestination(dest, tag);
        return new(() => ImmediateSend(value, dest, tag));
    }

    /// <summary>A send of <paramref name="values"/> as they are at each start (MPI_Send_init on a buffer).</summary>
    public PersistentRequest PersistentSend<T>(T[] values, int dest, int tag)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckDestination(dest, tag);
        return new(() => ImmediateSend(values, dest, tag));
    }

    /// <summary>A receive to start again and again (MPI_Recv_init); its value is the last round's.</summary>
    public PersistentRequest<T> PersistentReceive<T>(int source, int tag)
    {
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        return new(() => ImmediateReceive<T>(source, tag), round => ((ReceiveRequest<T>)round).Value);
    }

    /// <summary>A receive into <paramref name="values"/> to start again and again (MPI_Recv_init on a buffer).</summary>
    public PersistentRequest<T[]> PersistentReceive<T>(int source, int tag, T[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        return new(() => ImmediateReceive(source, tag, values), round => ((ReceiveRequest<T[]>)round).Value);
    }

    // ---- Probes ----

    /// <summary>Waits until a matching message is available, without receiving it (MPI_Probe).</summary>
    public Status Probe(int source, int tag)
    {
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        var probe = Runtime.Device.Engine.PostProbe(new Envelope(Context, source, tag));
        probe.Wait(Runtime.Device.Engine);
        Request.ThrowIfFailed(probe);
        return StatusOf(probe.Message!);
    }

    /// <summary>The status of a matching message if one is available, otherwise null (MPI_Iprobe).</summary>
    public Status? ImmediateProbe(int source, int tag)
    {
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        try
        {
            var message = Runtime.Device.Engine.TryProbe(new Envelope(Context, source, tag));
            return message is null ? null : StatusOf(message);
        }
        catch (MpiException e)
        {
            throw new MpiException(e.ErrorClass, e.Message, e);
        }
    }

    // ---- Matched probes (MPI-3 §3.8.2) ----

    /// <summary>
    /// Waits for a matching message and takes it out of matching, so that no other receive (another thread's of this
    /// rank included) can take it before <see cref="MatchedMessage.Receive{T}()"/> does (MPI_Mprobe). With
    /// <see cref="ProcNull"/>, a message that holds nothing (MPI_MESSAGE_NO_PROC).
    /// </summary>
    public MatchedMessage MatchedProbe(int source, int tag)
    {
        if (source == ProcNull) return new MatchedMessage(this, null);
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        return new MatchedMessage(this, ReceiveMessage(source, tag, Context));
    }

    /// <summary>The same if a matching message has arrived, taken out of matching; otherwise null at once (MPI_Improbe).</summary>
    public MatchedMessage? ImmediateMatchedProbe(int source, int tag)
    {
        if (source == ProcNull) return new MatchedMessage(this, null);
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        try
        {
            return Runtime.Device.Engine.TryTake(new Envelope(Context, source, tag)) is { } message ? new MatchedMessage(this, message) : null;
        }
        catch (MpiException e)
        {
            throw new MpiException(e.ErrorClass, e.Message, e);
        }
    }

    /// <summary>Decodes a message that <see cref="MatchedProbe"/> took, as a receive of it would.</summary>
    internal T ReceiveMatched<T>(Message message, out CompletedStatus status)
    {
        var value = Decode<T>(message, Context);
        status = new CompletedStatus(message.Envelope.Source, message.Envelope.Tag, message.Type, message.Payload.Length, CountOf(value), false);
        return value;
    }

    /// <summary>The status of a message taken by a matched probe.</summary>
    internal static Status MatchedStatus(Message message) => StatusOf(message);

    // ---- Synchronisation and communicators ----

    /// <summary>Returns once every member (of both groups, for an intercommunicator) has called it (MPI_Barrier).</summary>
    public abstract void Barrier();

    /// <summary>
    /// A communicator with the same groups and a new context (MPI_Comm_dup; MPI.NET's ICloneable form), carrying the
    /// attributes whose duplication is Shallow or Deep.
    /// </summary>
    public abstract Communicator Clone();

    /// <summary>
    /// Compares with another communicator (MPI_Comm_compare): Identical for the same context and groups, Congruent for
    /// the same groups in the same order, Similar for the same members in another order, else Unequal. For
    /// intercommunicators both the local and the remote groups count.
    /// </summary>
    public Comparison Compare(Communicator other)
    {
        ArgumentNullException.ThrowIfNull(other);
        if (ReferenceEquals(this, other)) return Comparison.Identical;
        if (IsIntercommunicator != other.IsIntercommunicator) return Comparison.Unequal;
        var local = Group.Compare(other.Group);
        var remote = IsIntercommunicator ? new Group(_peers).Compare(new Group(other._peers)) : Comparison.Identical;
        if (local == Comparison.Unequal || remote == Comparison.Unequal) return Comparison.Unequal;
        if (local != Comparison.Identical || remote != Comparison.Identical) return Comparison.Similar;
        return other.Context == Context ? Comparison.Identical : Comparison.Congruent;
    }

    private bool IsIntercommunicator => !ReferenceEquals(_peers, _members);

    // ---- Job control ----

    /// <summary>Aborts every rank of the job (MPI_Abort); does not return.</summary>
    public void Abort(int errorCode)
    {
        var reason = new MpiException(ErrorClass.Aborted, $"Rank {Runtime.Device.Rank} called Abort({errorCode}).") { AbortCode = errorCode };
        Runtime.Abort(reason);
        throw reason;
    }

    /// <summary>Frees this communicator (MPI_Comm_free); <see cref="World"/> and <see cref="Self"/> cannot be freed.</summary>
    public void Dispose()
    {
        // MPI_Comm_free lets the communicator's outstanding operations finish; its nonblocking collectives do here.
        Sequence.AwaitTurn();
        if (Context > 3) _disposed = true;
        GC.SuppressFinalize(this);
    }

    // ---- Internals shared with collectives ----

    internal SendOperation StartSend<T>(T value, int dest, int tag, int context, bool synchronous)
    {
        CheckLive();
        if (dest == ProcNull) return SendOperation.Done;
        CheckRank(dest, nameof(dest));
        CheckTag(tag, allowAny: false);
        return StartSend(Codec<T>.Instance.Encode(value, Runtime.Payloads), dest, tag, context, synchronous);
    }

    /// <summary>Sends <paramref name="count"/> elements of an array of a raw type from <paramref name="start"/> on, read in place, as an array of them.</summary>
    internal SendOperation StartSend<T>(T[] array, int start, int count, int dest, int tag, int context)
    {
        CheckLive();
        CheckRank(dest, nameof(dest));
        var payload = ((RawArrayCodec<T>)Codec<T[]>.Instance).Encode(array, Runtime.Payloads);
        int size = Unsafe.SizeOf<T>();
        return StartSend(payload with { Bytes = payload.Bytes.Slice(start * size, count * size) }, dest, tag, context, synchronous: false);
    }

    private SendOperation StartSend(OutgoingPayload payload, int dest, int tag, int context, bool synchronous)
    {
        if (context != Context) Sequence.AwaitTurn();
        var link = Runtime.Links[_peers[dest]];
        Runtime.Traffic.Sent(link.Kind, payload.Bytes.Length);
        return link.Send(new Envelope(context, Rank, tag), payload, synchronous);
    }

    /// <summary>Waits for a send, making progress meanwhile (a lent payload completes when the peer's acknowledgement is read).</summary>
    internal void Complete(SendOperation send)
    {
        send.Wait(Runtime.Device.Engine);
        Request.ThrowIfFailed(send);
    }

    internal ReceiveOperation PostReceive(int source, int tag, int context, bool returnsNewArray = false, ReceiveTarget? into = null)
    {
        CheckLive();
        CheckSource(source);
        CheckTag(tag, allowAny: true);
        if (context != Context) Sequence.AwaitTurn();
        return Runtime.Device.Engine.Post(new Envelope(context, source, tag), returnsNewArray, into);
    }

    /// <summary>Posts a receive and waits for it; <paramref name="into"/> is the caller's array it may be read into (<see cref="ReceiveOperation.Into"/>).</summary>
    internal Message ReceiveMessage(int source, int tag, int context, bool returnsNewArray = false, ReceiveTarget? into = null) =>
        Complete(PostReceive(source, tag, context, returnsNewArray, into));

    /// <summary>Waits for a posted receive and gives its message.</summary>
    internal Message Complete(ReceiveOperation receive)
    {
        receive.Wait(Runtime.Device.Engine);
        if (receive.Error is CollectiveMismatch mismatch) throw mismatch.Naming(Rank, Members);
        Request.ThrowIfFailed(receive);
        return receive.Message!;
    }

    internal T Decode<T>(Message message, int context)
    {
        var codec = Codec<T>.Instance;
        try
        {
            CheckType(message, codec.Type, context);
            return codec.Decode(message, Runtime.Payloads);
        }
        catch (MpiException e) when (e.ErrorClass is ErrorClass.Truncate or ErrorClass.Serialization)
        {
            throw Located(message, e);
        }
        finally
        {
            message.Release();
        }
    }

    // MPI.NET's callers pass null to have the array allocated, though the parameter says it is never null.
    private static bool IsNull<T>(T[] values) => values is null;

    /// <summary>
    /// The message's array: decoded into <paramref name="into"/> when that has exactly the message's number of elements
    /// of a raw type (known from its length before decoding), otherwise a new array.
    /// </summary>
    internal T[] DecodeArray<T>(Message message, int context, T[]? into)
    {
        if (into is null || Codec<T[]>.Instance is not RawArrayCodec<T> || message.Payload.Length != (long)into.Length * Unsafe.SizeOf<T>())
            return Decode<T[]>(message, context);
        DecodeInto(message, context, ref into);
        return into;
    }

    /// <summary>
    /// The message's array decoded into <paramref name="values"/> from element <paramref name="at"/> on (or into a new
    /// array, when <paramref name="values"/> is null); gives its element count. Releases the message.
    /// </summary>
    internal int DecodeInto<T>(Message message, int context, ref T[] values, int at = 0)
    {
        var codec = Codec<T[]>.Instance;
        try
        {
            CheckType(message, codec.Type, context);
            if (codec is RawArrayCodec<T> raw)
            {
                T[]? buffer = values;
                int count = raw.DecodeInto(message, ref buffer, at);
                values = buffer!;
                return count;
            }
            var decoded = codec.Decode(message, Runtime.Payloads);
            if (values is null) values = decoded;
            else if (decoded.Length > values.Length - at) throw Truncated(message, decoded.Length, values.Length - at);
            else decoded.CopyTo(values, at);
            return decoded.Length;
        }
        catch (MpiException e) when (e.ErrorClass is ErrorClass.Truncate or ErrorClass.Serialization)
        {
            throw Located(message, e);
        }
        finally
        {
            message.Release();
        }
    }

    /// <summary>Checks a rank that point-to-point names: of the remote group, for an intercommunicator.</summary>
    internal void CheckRank(int rank, string argument)
    {
        if ((uint)rank >= (uint)_peers.Length)
            throw new MpiException(ErrorClass.InvalidRank, !IsIntercommunicator
                ? $"Rank {rank} (argument '{argument}') is not in this communicator of {Size} ranks."
                : $"Rank {rank} (argument '{argument}') is not in the remote group of {_peers.Length} ranks.");
    }

    internal ReadOnlySpan<int> Peers => _peers;

    private void CheckSource(int source)
    {
        if (source != AnySource) CheckRank(source, nameof(source));
    }

    private void CheckDestination(int dest, int tag)
    {
        if (dest != ProcNull) CheckRank(dest, nameof(dest));
        CheckTag(tag, allowAny: false);
    }

    private static void CheckTag(int tag, bool allowAny)
    {
        if (tag < 0 && !(allowAny && tag == AnyTag))
            throw new MpiException(ErrorClass.InvalidTag, $"Tag {tag} is invalid: tags run from 0 to {MaxTag}{(allowAny ? ", or AnyTag for a receive" : "")}.");
    }

    private void CheckLive()
    {
        if (_disposed) throw new MpiException(ErrorClass.InvalidCommunicator, $"This communicator (context {Context}) has been disposed.");
    }

    private void CheckType(Message message, PayloadType expected, int context)
    {
        if (message.Type != expected)
            throw new MpiException(ErrorClass.TypeMismatch, $"{Where(message)}{(context == CollectiveContext ? " in a collective" : "")}: expected {expected} but the sender sent {message.Type}.");
    }

    private MessageTruncatedException Truncated(Message message, int count, int capacity) =>
        new($"message of {count} elements does not fit a buffer of {capacity}.");

    /// <summary>The same error, its message prefixed with the receiving rank, the source and the tag.</summary>
    private MpiException Located(Message message, MpiException error) => error.ErrorClass == ErrorClass.Truncate
        ? new MessageTruncatedException($"{Where(message)}: {error.Message}", error)
        : new MpiException(error.ErrorClass, $"{Where(message)}: {error.Message}", error);

    private string Where(Message message) => $"Rank {Rank} receiving from rank {message.Envelope.Source} with tag {message.Envelope.Tag}";

    private static Status StatusOf(Message message) => new(message.Envelope.Source, message.Envelope.Tag, message.Type, message.Payload.Length);

    private static int CountOf<T>(T value) => value is Array array ? array.Length : 1;
}
