using Pmpi.Payloads;

namespace Pmpi.Matching;

/// <summary>A receive posted to a <see cref="MatchingEngine"/>: completes with its matched message, by cancel, or with an error.</summary>
internal sealed class ReceiveOperation(Envelope pattern, long order, bool returnsNewArray, ReceiveTarget? into) : Completion
{
    public Envelope Pattern { get; } = pattern;

    /// <summary>
    /// The receive returns its message as a new array rather than copying it into one the caller holds: a link may
    /// then read a large array straight into the array returned (<see cref="MatchingEngine.NextReceive"/>).
    /// </summary>
    public bool ReturnsNewArray { get; } = returnsNewArray;

    /// <summary>
    /// The caller's array that a receive from one source fills, blocking or not: a link may read a large array of its
    /// type straight into it (<see cref="MatchingEngine.NextReceive"/>). Only this source's link can match such a
    /// receive, in the order its messages come, and once a link has asked for it the receive can no longer be
    /// cancelled (<see cref="Claimed"/>; MPI lets a cancel fail, the receive then completing normally), so the receive
    /// a message starts for is the one it completes, and a cancelled receive's array is never written.
    /// </summary>
    public ReceiveTarget? Into { get; } = into;

    /// <summary>Post order, which decides which of several matching receives gets a message (MPI-4.1 §3.5).</summary>
    public long Order { get; } = order;

    public Message? Message { get; private set; }

    public bool Cancelled { get; private set; }

    /// <summary>
    /// Set under the engine's lock when a message is assigned, or a link starts reading one into <see cref="Into"/>,
    /// so a racing cancel can neither lose the message nor leave it in the caller's array.
    /// </summary>
    internal bool Claimed { get; set; }

    internal void Match(Message message)
    {
        Message = message;
        TryComplete();
    }

    internal void MarkCancelled()
    {
        Cancelled = true;
        TryComplete();
    }

    internal void Fail(Exception error) => TryComplete(error);
}

/// <summary>A blocking probe: completes with the earliest matching message, which stays queued.</summary>
internal sealed class ProbeOperation(Envelope pattern) : Completion
{
    public Envelope Pattern { get; } = pattern;

    public Message? Message { get; private set; }

    internal void Match(Message message)
    {
        Message = message;
        TryComplete();
    }

    internal void Fail(Exception error) => TryComplete(error);
}

/// <summary>
/// One rank's message matching (MPI-4.1 §3.5): per communicator context, FIFO queues of unexpected messages and of
/// posted receives, hashed by (source, tag). A receive takes the earliest-arrived matching message, wildcards
/// included; a message goes to the earliest-posted matching receive. So two messages from one sender on one
/// (context, tag) are never reordered, and contexts never see each other's traffic. Thread-safe; knows no transport.
/// </summary>
internal sealed class MatchingEngine
{
    /// <summary>Wildcard source (MPI_ANY_SOURCE).</summary>
    public const int AnySource = -1;

    /// <summary>Wildcard tag (MPI_ANY_TAG).</summary>
    public const int AnyTag = -1;

    private readonly Lock _lock = new();
    private readonly Dictionary<int, ContextQueues> _contexts = [];
    private int _lastContext;
    private ContextQueues? _lastQueues; // the queues of _lastContext (under the lock)
    private readonly List<ProbeOperation> _probes = [];
    private long _arrivals;
    private long _bytesArrived;
    private long _posts;
    private MpiException? _aborted;

    /// <summary>
    /// What a thread waiting for this rank's receive or probe polls while it spins. Null when the device delivers
    /// only from threads of its own.
    /// </summary>
    public IPolledLinks? Progress { get; set; }

    /// <summary>How a thread waiting for this rank polls <see cref="Progress"/> before it blocks.</summary>
    public AdaptiveSpin Spin { get; } = new();

    /// <summary>How many messages have arrived for this rank, and how many payload bytes they carried (the rank's meters).</summary>
    public (long Messages, long Bytes) Arrived
    {
        get
        {
            lock (_lock) return (_arrivals, _bytesArrived);
        }
    }

    /// <summary>Hands an arrived message to the earliest matching posted receive, or queues it as unexpected.</summary>
    public void Deliver(Message message)
    {
        ReceiveOperation? receive, disagreeing = null;
        lock (_lock)
        {
            if (_aborted is not null)
            {
                message.Drop(_aborted);
                return;
            }
            message.Arrival = _arrivals++;
            _bytesArrived += message.Payload.Length;
            var envelope = message.Envelope;
            var queues = QueuesOf(envelope.Context);
            receive = queues.TakeEarliestReceive(envelope.Source, envelope.Tag);
            if (receive is null)
            {
                queues.Enqueue(message);
                CompleteProbes(message);
                // A collective's receive from this sender that awaits another tag will never see its own message:
                // the sender's next one in this context is this (CollectiveTag).
                if (CollectiveTag.IsCollective(envelope.Context)) disagreeing = queues.TakeReceiveFrom(envelope.Source);
            }
        }
        if (receive is not null) receive.Match(message);
        else disagreeing?.Fail(CollectiveTag.Disagreement(disagreeing.Pattern, message.Envelope.Tag));
    }

    /// <summary>
    /// The receive a message with <paramref name="envelope"/> would match if it arrived now, if any. Links ask as a
    /// message starts, where to read a large array (<see cref="Payloads.IncomingBuffer"/>); only a hint, since another
    /// message may take that receive first, except one with <see cref="ReceiveOperation.Into"/>, which this claims.
    /// </summary>
    public ReceiveOperation? NextReceive(Envelope envelope)
    {
        lock (_lock)
        {
            var receive = _contexts.TryGetValue(envelope.Context, out var queues) ? queues.PeekEarliestReceive(envelope.Source, envelope.Tag) : null;
            if (receive?.Into is not null) receive.Claimed = true;
            return receive;
        }
    }

    /// <summary>Posts a receive; it completes at once if an unexpected message already matches.</summary>
    /// <param name="pattern">Context, source and tag, wildcards allowed.</param>
    /// <param name="returnsNewArray">See <see cref="ReceiveOperation.ReturnsNewArray"/>.</param>
    /// <param name="into">See <see cref="ReceiveOperation.Into"/>: ignored for a receive from any source.</param>
    public ReceiveOperation Post(Envelope pattern, bool returnsNewArray = false, ReceiveTarget? into = null)
    {
        Message? message;
        ReceiveOperation receive;
        lock (_lock)
        {
            receive = new ReceiveOperation(pattern, _posts++, returnsNewArray, pattern.Source == AnySource ? null : into);
            if (_aborted is not null)
            {
                receive.Fail(_aborted);
                return receive;
            }
            var queues = QueuesOf(pattern.Context);
            message = queues.TakeEarliestMessage(pattern.Source, pattern.Tag);
            // In a collective, the sender's earliest message here is the one for this receive; another tag there is a
            // rank that disagrees (CollectiveTag), and this receive would wait forever.
            if (message is null && CollectiveTag.IsCollective(pattern.Context) && pattern.Source != AnySource && pattern.Tag != AnyTag
                && queues.PeekEarliestMessage(pattern.Source, AnyTag) is { } other)
            {
                receive.Fail(CollectiveTag.Disagreement(pattern, other.Envelope.Tag));
                return receive;
            }
            if (message is null) queues.Post(receive);
        }
        if (message is null) Progress?.Poll();
        else receive.Match(message);
        return receive;
    }

    /// <summary>Cancels a posted receive that has not matched yet (MPI-4.1 §3.8.4). True if it was cancelled.</summary>
    public bool Cancel(ReceiveOperation receive)
    {
        lock (_lock)
        {
            if (receive.Claimed || receive.IsCompleted) return false;
            // The entry stays in its queue and is skipped when reached; removal from the middle of a FIFO is rare.
            receive.MarkCancelled();
            return true;
        }
    }

    /// <summary>The earliest unexpected message matching <paramref name="pattern"/>, left queued; null if none.</summary>
    public Message? TryProbe(Envelope pattern)
    {
        Progress?.Poll();
        lock (_lock)
        {
            if (_aborted is not null) throw _aborted;
            return _contexts.TryGetValue(pattern.Context, out var queues) ? queues.PeekEarliestMessage(pattern.Source, pattern.Tag) : null;
        }
    }

    /// <summary>The earliest unexpected message matching <paramref name="pattern"/>, taken off its queue; null if none (MPI_Improbe).</summary>
    public Message? TryTake(Envelope pattern)
    {
        Progress?.Poll();
        lock (_lock)
        {
            if (_aborted is not null) throw _aborted;
            return _contexts.TryGetValue(pattern.Context, out var queues) ? queues.TakeEarliestMessage(pattern.Source, pattern.Tag) : null;
        }
    }

    /// <summary>A probe that completes when a matching message is queued (at once if one is).</summary>
    public ProbeOperation PostProbe(Envelope pattern)
    {
        var probe = new ProbeOperation(pattern);
        Message? message;
        lock (_lock)
        {
            if (_aborted is not null)
            {
                probe.Fail(_aborted);
                return probe;
            }
            message = _contexts.TryGetValue(pattern.Context, out var queues) ? queues.PeekEarliestMessage(pattern.Source, pattern.Tag) : null;
            if (message is null)
            {
                _probes.Add(probe);
                return probe;
            }
        }
        probe.Match(message);
        return probe;
    }

    /// <summary>Fails every pending receive and probe, drops every queued message, and refuses all later traffic.</summary>
    public void Abort(MpiException reason)
    {
        List<ReceiveOperation> receives = [];
        List<Message> messages = [];
        List<ProbeOperation> probes;
        lock (_lock)
        {
            if (_aborted is not null) return;
            _aborted = reason;
            foreach (var queues in _contexts.Values) queues.DrainInto(receives, messages);
            _contexts.Clear();
            _lastQueues = null;
            probes = [.. _probes];
            _probes.Clear();
        }
        foreach (var receive in receives) receive.Fail(reason);
        foreach (var probe in probes) probe.Fail(reason);
        foreach (var message in messages) message.Drop(reason);
    }

    /// <summary>The reason the engine was aborted, or null.</summary>
    public MpiException? AbortReason
    {
        get { lock (_lock) return _aborted; }
    }

    private ContextQueues QueuesOf(int context)
    {
        // Most traffic stays in one context for a while (a loop of sends, a collective): one comparison finds it.
        if (_lastQueues is { } last && _lastContext == context) return last;
        if (!_contexts.TryGetValue(context, out var queues)) _contexts[context] = queues = new ContextQueues();
        _lastContext = context;
        return _lastQueues = queues;
    }

    private void CompleteProbes(Message message)
    {
        for (int i = _probes.Count - 1; i >= 0; i--)
        {
            var probe = _probes[i];
            if (probe.Pattern.Context != message.Envelope.Context || !Matches(probe.Pattern.Source, probe.Pattern.Tag, message.Envelope)) continue;
            _probes.RemoveAt(i);
            probe.Match(message);
        }
    }

    private static bool Matches(int source, int tag, Envelope envelope) =>
        (source == AnySource || source == envelope.Source) && (tag == AnyTag || tag == envelope.Tag);

    /// <summary>The queues of one communicator context, keyed by (source, tag); wildcard keys only for receives.</summary>
    private sealed class ContextQueues
    {
        private readonly Dictionary<long, Queue<Message>> _unexpected = [];
        private readonly Dictionary<long, Queue<ReceiveOperation>> _posted = [];
        private readonly Stack<Queue<Message>> _spareMessageQueues = new();
        private int _wildcardEntries; // posted receives with a wildcard, cancelled ones included until dequeued

        public void Enqueue(Message message)
        {
            var key = KeyOf(message.Envelope.Source, message.Envelope.Tag);
            if (!_unexpected.TryGetValue(key, out var queue))
            {
                queue = _spareMessageQueues.Count > 0 ? _spareMessageQueues.Pop() : new Queue<Message>();
                _unexpected[key] = queue;
            }
            queue.Enqueue(message);
        }

        public void Post(ReceiveOperation receive)
        {
            var key = KeyOf(receive.Pattern.Source, receive.Pattern.Tag);
            if (!_posted.TryGetValue(key, out var queue)) _posted[key] = queue = new Queue<ReceiveOperation>();
            queue.Enqueue(receive);
            if (IsWildcard(key)) _wildcardEntries++;
        }

        /// <summary>The earliest-posted live receive that matches (source, tag), taken off its queue.</summary>
        public ReceiveOperation? TakeEarliestReceive(int source, int tag)
        {
            if (EarliestReceiveQueue(source, tag) is not { } best) return null;
            var receive = Dequeue(best);
            receive.Claimed = true;
            return receive;
        }

        /// <summary>The earliest-posted live receive from exactly <paramref name="source"/> with a tag of its own, taken off its queue.</summary>
        public ReceiveOperation? TakeReceiveFrom(int source)
        {
            Queue<ReceiveOperation>? best = null;
            foreach (var key in _posted.Keys)
            {
                if (SourceOf(key) == source && TagOf(key) != AnyTag) Consider(ref best, key);
            }
            if (best is null) return null;
            var receive = Dequeue(best);
            receive.Claimed = true;
            return receive;
        }

        /// <summary>The receive <see cref="TakeEarliestReceive"/> would take, left in its queue.</summary>
        public ReceiveOperation? PeekEarliestReceive(int source, int tag) => EarliestReceiveQueue(source, tag)?.Peek();

        private Queue<ReceiveOperation>? EarliestReceiveQueue(int source, int tag)
        {
            if (_posted.Count == 0) return null;
            Queue<ReceiveOperation>? best = null;
            Consider(ref best, KeyOf(source, tag));
            // Most programs post no wildcard receives: then one lookup decides.
            if (_wildcardEntries > 0)
            {
                Consider(ref best, KeyOf(AnySource, tag));
                Consider(ref best, KeyOf(source, AnyTag));
                Consider(ref best, KeyOf(AnySource, AnyTag));
            }
            return best;
        }

        private void Consider(ref Queue<ReceiveOperation>? best, long key)
        {
            if (!_posted.TryGetValue(key, out var queue)) return;
            while (queue.Count > 0 && queue.Peek().IsCompleted) Dequeue(queue); // cancelled entries
            if (queue.Count == 0)
            {
                _posted.Remove(key);
                return;
            }
            if (best is null || queue.Peek().Order < best.Peek().Order) best = queue;
        }

        private ReceiveOperation Dequeue(Queue<ReceiveOperation> queue)
        {
            var receive = queue.Dequeue();
            if (IsWildcard(KeyOf(receive.Pattern.Source, receive.Pattern.Tag))) _wildcardEntries--;
            return receive;
        }

        private static bool IsWildcard(long key) => SourceOf(key) == AnySource || TagOf(key) == AnyTag;

        /// <summary>The earliest-arrived message matching (source, tag), wildcards allowed, taken off its queue.</summary>
        public Message? TakeEarliestMessage(int source, int tag)
        {
            if (!FindEarliest(source, tag, out long key)) return null;
            var queue = _unexpected[key];
            var message = queue.Dequeue();
            if (queue.Count == 0)
            {
                _unexpected.Remove(key);
                _spareMessageQueues.Push(queue);
            }
            return message;
        }

        public Message? PeekEarliestMessage(int source, int tag)
        {
            return FindEarliest(source, tag, out long key) ? _unexpected[key].Peek() : null;
        }

        private bool FindEarliest(int source, int tag, out long earliest)
        {
            earliest = KeyOf(source, tag);
            if (_unexpected.Count == 0) return false;
            if (source != AnySource && tag != AnyTag) return _unexpected.ContainsKey(earliest);
            long arrival = long.MaxValue;
            foreach (var (key, queue) in _unexpected)
            {
                if ((source != AnySource && source != SourceOf(key)) || (tag != AnyTag && tag != TagOf(key))) continue;
                var head = queue.Peek().Arrival;
                if (head < arrival)
                {
                    arrival = head;
                    earliest = key;
                }
            }
            return arrival != long.MaxValue;
        }

        public void DrainInto(List<ReceiveOperation> receives, List<Message> messages)
        {
            foreach (var queue in _posted.Values) receives.AddRange(queue);
            foreach (var queue in _unexpected.Values) messages.AddRange(queue);
            _posted.Clear();
            _unexpected.Clear();
            _wildcardEntries = 0;
        }
    }

    // A queue's key: its (source, tag) in one long, either a wildcard in a receive's. Not a tuple, whose hash mixes
    // through HashCode.Combine on every message's two or three lookups, nor a struct of PMPI's: ReadyToRun images hold
    // the dictionaries' code over long, where over a struct of PMPI's a rank compiles it as it starts.
    private static long KeyOf(int source, int tag) => ((long)source << 32) | (uint)tag;

    private static int SourceOf(long key) => (int)(key >> 32);

    private static int TagOf(long key) => (int)key;
}
