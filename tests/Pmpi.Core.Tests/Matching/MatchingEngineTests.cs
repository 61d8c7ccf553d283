using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Tests.Matching;

public class MatchingEngineTests
{
    private const int Any = MatchingEngine.AnySource;
    private static readonly PayloadType IntType = new(PayloadCode.Int32, false, null);

    private static Message Msg(int context, int source, int tag, int id) =>
        new(new Envelope(context, source, tag), IntType, BitConverter.GetBytes(id));

    private static int IdOf(ReceiveOperation receive) => BitConverter.ToInt32(receive.Message!.Payload.Span);

    [Fact]
    public void Post_AfterDelivery_TakesQueuedMessage()
    {
        var engine = new MatchingEngine();
        engine.Deliver(Msg(0, 1, 5, id: 42));

        var receive = engine.Post(new Envelope(0, 1, 5));

        Assert.True(receive.IsCompleted);
        Assert.Equal(42, IdOf(receive));
    }

    [Fact]
    public void Deliver_WithTwoMatchingReceives_GoesToEarliestPosted()
    {
        var engine = new MatchingEngine();
        var wildcard = engine.Post(new Envelope(0, Any, MatchingEngine.AnyTag));
        var exact = engine.Post(new Envelope(0, 1, 5));

        engine.Deliver(Msg(0, 1, 5, id: 1));

        Assert.True(wildcard.IsCompleted);
        Assert.False(exact.IsCompleted);
    }

    [Fact]
    public void Post_Wildcard_TakesEarliestArrivalAcrossSourcesAndTags()
    {
        var engine = new MatchingEngine();
        engine.Deliver(Msg(0, 2, 9, id: 1));
        engine.Deliver(Msg(0, 1, 5, id: 2));
        engine.Deliver(Msg(0, 2, 5, id: 3));

        Assert.Equal(1, IdOf(engine.Post(new Envelope(0, Any, MatchingEngine.AnyTag))));
        Assert.Equal(2, IdOf(engine.Post(new Envelope(0, Any, 5))));
        Assert.Equal(3, IdOf(engine.Post(new Envelope(0, 2, MatchingEngine.AnyTag))));
    }

    [Fact]
    public void Deliver_OtherContext_NeverMatches()
    {
        var engine = new MatchingEngine();
        var receive = engine.Post(new Envelope(0, Any, MatchingEngine.AnyTag));

        engine.Deliver(Msg(1, 0, 0, id: 7));

        Assert.False(receive.IsCompleted);
        Assert.Null(engine.TryProbe(new Envelope(0, Any, MatchingEngine.AnyTag)));
        Assert.NotNull(engine.TryProbe(new Envelope(1, Any, MatchingEngine.AnyTag)));
    }

    [Fact]
    public void Cancel_PendingReceive_CompletesCancelledAndLosesNoMessage()
    {
        var engine = new MatchingEngine();
        var cancelled = engine.Post(new Envelope(0, 1, 5));

        Assert.True(engine.Cancel(cancelled));
        engine.Deliver(Msg(0, 1, 5, id: 9));
        var next = engine.Post(new Envelope(0, 1, 5));

        Assert.True(cancelled.Cancelled);
        Assert.Null(cancelled.Message);
        Assert.Equal(9, IdOf(next));
    }

    [Fact]
    public void Cancel_MatchedReceive_ReturnsFalse()
    {
        var engine = new MatchingEngine();
        var receive = engine.Post(new Envelope(0, 1, 5));
        engine.Deliver(Msg(0, 1, 5, id: 3));

        Assert.False(engine.Cancel(receive));
        Assert.Equal(3, IdOf(receive));
    }

    [Fact]
    public void PostProbe_CompletesOnArrival_LeavesMessageQueued()
    {
        var engine = new MatchingEngine();
        var probe = engine.PostProbe(new Envelope(0, Any, 4));

        engine.Deliver(Msg(0, 3, 4, id: 11));

        Assert.True(probe.IsCompleted);
        Assert.Equal(3, probe.Message!.Envelope.Source);
        Assert.Equal(11, IdOf(engine.Post(new Envelope(0, 3, 4))));
    }

    [Fact]
    public void Abort_FailsPendingAndLaterOperations()
    {
        var engine = new MatchingEngine();
        var receive = engine.Post(new Envelope(0, 1, 5));
        var reason = new MpiException(ErrorClass.Aborted, "stop");

        engine.Abort(reason);

        Assert.Same(reason, receive.Error);
        Assert.Same(reason, engine.Post(new Envelope(0, 1, 5)).Error);
    }

    /// <summary>
    /// Thousands of random interleavings of deliveries, (wildcard) receives and cancels, replayed against a reference
    /// model of MPI matching: a message goes to the earliest-posted matching receive, a receive takes the
    /// earliest-arrived matching message. The seed in a failure message reproduces it.
    /// </summary>
    [Fact]
    public void RandomInterleavings_MatchReferenceModel()
    {
        for (int seed = 0; seed < 3000; seed++) ReplayAgainstModel(seed, operations: 120);
    }

    /// <summary>One of two point-to-point contexts (even; a collective context, odd, adds the rule of CollectiveTag).</summary>
    private static int PointToPointContext(Random random) => random.Next(2) * 2;

    [Fact]
    public void CollectiveContext_ReceivePostedBehindAnotherTagFromItsSource_FailsNamingBoth()
    {
        var engine = new MatchingEngine();
        engine.Deliver(Msg(1, 2, CollectiveTag.Of(CollectiveStep.Barrier), id: 1));

        var receive = engine.Post(new Envelope(1, 2, CollectiveTag.Of(CollectiveStep.Allreduce, (int)PredefinedOperation.Add)));

        var error = Assert.IsType<CollectiveMismatch>(receive.Error);
        Assert.Equal(ErrorClass.CollectiveMismatch, error.ErrorClass);
        Assert.Contains("rank 2 sent Barrier where this rank awaits Allreduce by whole values of the predefined Add", error.Message);
    }

    [Fact]
    public void CollectiveContext_MessageOfAnotherTagArrivesForAWaitingReceive_FailsIt()
    {
        var engine = new MatchingEngine();
        var receive = engine.Post(new Envelope(3, 0, CollectiveTag.Of(CollectiveStep.Reduce, CollectiveTag.UserOperation, root: 0)));
        var other = engine.Post(new Envelope(3, 1, CollectiveTag.Of(CollectiveStep.Reduce, CollectiveTag.UserOperation, root: 0)));

        engine.Deliver(Msg(3, 0, CollectiveTag.Of(CollectiveStep.Reduce, CollectiveTag.UserOperation, root: 1), id: 1));

        var error = Assert.IsType<CollectiveMismatch>(receive.Error);
        Assert.Contains("rank 0 sent Reduce of a user-defined operation from root 1 where this rank awaits Reduce of a user-defined operation from root 0", error.Message);
        Assert.False(other.IsCompleted); // another sender's receive waits on
    }

    [Fact]
    public void PointToPointContext_MessagesOfOtherTagsFromTheSource_LeaveTheReceivePosted()
    {
        var engine = new MatchingEngine();
        engine.Deliver(Msg(2, 1, 5, id: 1));

        var receive = engine.Post(new Envelope(2, 1, 6));
        engine.Deliver(Msg(2, 1, 7, id: 2));
        engine.Deliver(Msg(2, 1, 6, id: 3));

        Assert.Equal(3, IdOf(receive));
    }

    private static void ReplayAgainstModel(int seed, int operations)
    {
        var random = new Random(seed);
        var engine = new MatchingEngine();
        var modelMessages = new List<(Envelope Envelope, int Id)>();
        var modelReceives = new List<(Envelope Pattern, ReceiveOperation Operation)>();
        var expected = new Dictionary<ReceiveOperation, int>();
        var posted = new List<ReceiveOperation>();
        int nextId = 0;

        static bool Matches(Envelope pattern, Envelope message) =>
            pattern.Context == message.Context && (pattern.Source == Any || pattern.Source == message.Source) &&
            (pattern.Tag == MatchingEngine.AnyTag || pattern.Tag == message.Tag);

        for (int step = 0; step < operations; step++)
        {
            int choice = random.Next(10);
            if (choice < 5)
            {
                var envelope = new Envelope(PointToPointContext(random), random.Next(3), random.Next(3));
                int id = nextId++;
                int waiting = modelReceives.FindIndex(r => Matches(r.Pattern, envelope));
                if (waiting >= 0)
                {
                    expected[modelReceives[waiting].Operation] = id;
                    modelReceives.RemoveAt(waiting);
                }
                else modelMessages.Add((envelope, id));
                engine.Deliver(Msg(envelope.Context, envelope.Source, envelope.Tag, id));
            }
            else if (choice < 9)
            {
                var pattern = new Envelope(PointToPointContext(random), random.Next(4) == 0 ? Any : random.Next(3), random.Next(4) == 0 ? MatchingEngine.AnyTag : random.Next(3));
                var operation = engine.Post(pattern);
                posted.Add(operation);
                int queued = modelMessages.FindIndex(m => Matches(pattern, m.Envelope));
                if (queued >= 0)
                {
                    expected[operation] = modelMessages[queued].Id;
                    modelMessages.RemoveAt(queued);
                }
                else modelReceives.Add((pattern, operation));
            }
            else if (modelReceives.Count > 0)
            {
                int victim = random.Next(modelReceives.Count);
                Assert.True(engine.Cancel(modelReceives[victim].Operation), $"seed {seed}: a pending receive could not be cancelled");
                modelReceives.RemoveAt(victim);
            }
        }

        foreach (var operation in posted)
        {
            if (expected.TryGetValue(operation, out var id))
            {
                Assert.True(operation.IsCompleted && !operation.Cancelled, $"seed {seed}: receive {operation.Pattern} should have matched message {id}");
                Assert.Equal(id, IdOf(operation));
            }
            else if (operation.IsCompleted && !operation.Cancelled)
                Assert.Fail($"seed {seed}: receive {operation.Pattern} matched message {IdOf(operation)} but the model left it unmatched");
        }
        foreach (var (envelope, id) in modelMessages)
        {
            var receive = engine.Post(new Envelope(envelope.Context, envelope.Source, envelope.Tag));
            Assert.True(receive.IsCompleted, $"seed {seed}: message {id} {envelope} was lost");
            Assert.Equal(id, IdOf(receive));
        }
    }

    /// <summary>Four sender threads race into one engine; a wildcard receiver must see each sender's messages in order.</summary>
    [Fact]
    public void ConcurrentSenders_WildcardReceiver_NeverReordersOneSender()
    {
        const int senders = 4, perSender = 5000;
        var engine = new MatchingEngine();
        var threads = Enumerable.Range(0, senders).Select(source => new Thread(() =>
        {
            for (int sequence = 0; sequence < perSender; sequence++) engine.Deliver(Msg(0, source, 1, sequence));
        })).ToList();
        threads.ForEach(t => t.Start());

        var last = Enumerable.Repeat(-1, senders).ToArray();
        for (int i = 0; i < senders * perSender; i++)
        {
            var receive = engine.Post(new Envelope(0, Any, 1));
            receive.Wait();
            int source = receive.Message!.Envelope.Source, sequence = IdOf(receive);
            Assert.Equal(last[source] + 1, sequence);
            last[source] = sequence;
        }

        Assert.All(threads, t => Assert.True(t.Join(TimeSpan.FromSeconds(30))));
        Assert.All(last, l => Assert.Equal(perSender - 1, l));
    }
}
