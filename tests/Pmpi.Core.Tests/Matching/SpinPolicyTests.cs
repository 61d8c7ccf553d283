using System.Diagnostics;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Tests.Matching;

/// <summary>
/// How a waiting rank polls before it blocks: busily while the node has a core per rank, yielding its core when
/// ranks outnumber cores, and either way reading its links on the waiting thread until the message is there; briefly
/// after waits that outlasted the spin.
/// </summary>
public sealed class SpinPolicyTests
{
    [Fact]
    public void For_NoMoreRanksThanCores_SpinsBusilyForAMillisecond()
    {
        var policy = SpinPolicy.For(System.Environment.ProcessorCount);

        Assert.False(policy.Yields);
        Assert.Equal(Stopwatch.Frequency / 1_000, policy.Ticks);
    }

    [Fact]
    public void For_MoreRanksThanCores_PollsAndYieldsForHalfAMillisecond()
    {
        var policy = SpinPolicy.For(System.Environment.ProcessorCount + 1);

        Assert.True(policy.Yields);
        Assert.Equal(Stopwatch.Frequency / 2_000, policy.Ticks);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Wait_MessageArrivesThroughPolledLinks_ReadOnTheWaitingThreadWithoutBlocking(bool yields)
    {
        // Arrange: links that deliver the message on their 50th poll, and a policy that polls for 10 s.
        var engine = new MatchingEngine { Spin = { Policy = new SpinPolicy(Stopwatch.Frequency * 10, yields) } };
        var links = new DeliverOnPoll(engine, polls: 50);
        engine.Progress = links;
        var receive = engine.Post(new Envelope(0, 1, 5));

        // Act
        var waiting = Task.Run(() =>
        {
            receive.Wait(engine);
            return System.Environment.CurrentManagedThreadId;
        });

        // Assert
        int waitedOn = await waiting.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(42, BitConverter.ToInt32(receive.Message!.Payload.Span));
        Assert.Equal(waitedOn, links.DeliveredOn);
        Assert.Equal(50, links.Polls);
        Assert.False(links.SleptOnce, "The waiting thread blocked although the policy let it poll for 10 s.");
    }

    [Fact]
    public async Task Wait_AnotherThreadReadingALargeMessage_BlocksUntilItDeliversRatherThanSpinning()
    {
        // Arrange: links another thread is reading a large message from, and a policy that polls for 10 s.
        var engine = new MatchingEngine { Spin = { Policy = new SpinPolicy(Stopwatch.Frequency * 10, Yields: false) } };
        var links = new DeliverOnPoll(engine, polls: int.MaxValue) { Delivering = true };
        engine.Progress = links;
        var receive = engine.Post(new Envelope(0, 1, 5));
        int pollsBefore = links.Polls;
        var waiting = Task.Run(() => receive.Wait(engine));

        // Act: the reading thread delivers once the waiting one blocked.
        Assert.True(await links.Slept.WaitAsync(TimeSpan.FromSeconds(5)).ContinueWith(done => done.IsCompletedSuccessfully), "The waiting thread kept spinning while another read its message.");
        engine.Deliver(new Message(new Envelope(0, 1, 5), new PayloadType(PayloadCode.Int32, false, null), BitConverter.GetBytes(42)));

        // Assert
        await waiting.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(42, BitConverter.ToInt32(receive.Message!.Payload.Span));
        Assert.Equal(1, links.Polls - pollsBefore);
    }

    [Fact]
    public async Task Wait_AfterWaitsThatOutlastedTheSpin_SpinsBrieflyUntilAWaitEndsWithinItAgain()
    {
        // Arrange: a 2 ms spin, and messages that arrive only once the wait gave up spinning and blocked.
        var engine = new MatchingEngine { Spin = { Policy = new SpinPolicy(Stopwatch.Frequency / 500, Yields: false) } };

        // Act and assert: the spin shortens only once enough waits in a row outlasted it.
        for (int wait = 1; wait <= AdaptiveSpin.WastedBeforeBrief; wait++)
        {
            Assert.Equal(Stopwatch.Frequency / 500, engine.Spin.Next.Ticks);
            await WaitForMessageAfterItBlocked(engine);
        }
        Assert.Equal(SpinPolicy.Brief.Ticks, engine.Spin.Next.Ticks);
        Assert.False(engine.Spin.Next.Yields);

        // Act: a message that arrives while the wait spins.
        engine.Progress = new DeliverOnPoll(engine, polls: 50);
        var receive = engine.Post(new Envelope(0, 1, 5));
        await Task.Run(() => receive.Wait(engine)).WaitAsync(TimeSpan.FromSeconds(30));

        // Assert: spinning paid again, so the next wait spins as the policy says.
        Assert.Equal(Stopwatch.Frequency / 500, engine.Spin.Next.Ticks);
    }

    [Fact]
    public async Task Wait_ABlockedWaitShorterThanThePolicysSpin_KeepsTheFullSpin()
    {
        // Arrange: waits that outlasted a spin of one tick, so the next spins briefly though the policy is now 10 s.
        var engine = new MatchingEngine { Spin = { Policy = new SpinPolicy(1, Yields: false) } };
        for (int wait = 0; wait < AdaptiveSpin.WastedBeforeBrief; wait++) await WaitForMessageAfterItBlocked(engine);
        engine.Spin.Policy = new SpinPolicy(Stopwatch.Frequency * 10, Yields: false);
        Assert.Equal(SpinPolicy.Brief.Ticks, engine.Spin.Next.Ticks);

        // Act: a wait that blocks after the brief spin, and ends well within the policy's 10 s.
        await WaitForMessageAfterItBlocked(engine);

        // Assert
        Assert.Equal(Stopwatch.Frequency * 10, engine.Spin.Next.Ticks);
    }

    /// <summary>Waits for a receive whose message another thread delivers once the waiting thread stopped spinning.</summary>
    private static async Task WaitForMessageAfterItBlocked(MatchingEngine engine)
    {
        var links = new DeliverOnPoll(engine, polls: int.MaxValue);
        engine.Progress = links;
        var receive = engine.Post(new Envelope(0, 1, 5));
        var waiting = Task.Run(() => receive.Wait(engine));
        await links.Slept.WaitAsync(TimeSpan.FromSeconds(30));
        engine.Deliver(new Message(new Envelope(0, 1, 5), new PayloadType(PayloadCode.Int32, false, null), BitConverter.GetBytes(42)));
        await waiting.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(42, BitConverter.ToInt32(receive.Message!.Payload.Span));
    }

    /// <summary>Links whose <paramref name="polls"/>th poll delivers one message from rank 1, tag 5.</summary>
    private sealed class DeliverOnPoll(MatchingEngine engine, int polls) : IPolledLinks
    {
        public int Polls { get; private set; }

        public int DeliveredOn { get; private set; }

        public bool SleptOnce { get; private set; }

        /// <summary>Completes when the waiting thread says it blocks.</summary>
        public Task Slept => _slept.Task;

        public bool Delivering { get; init; }

        private readonly TaskCompletionSource _slept = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Poll()
        {
            if (++Polls != polls) return;
            DeliveredOn = System.Environment.CurrentManagedThreadId;
            engine.Deliver(new Message(new Envelope(0, 1, 5), new PayloadType(PayloadCode.Int32, false, null), BitConverter.GetBytes(42)));
        }

        public void Sleeping()
        {
            SleptOnce = true;
            _slept.TrySetResult();
        }

        public bool SleepOn(Completion completion)
        {
            SleptOnce = true;
            return false;
        }
    }
}
