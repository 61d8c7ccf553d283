using Pmpi.Collectives;

namespace Pmpi.Tests.Collectives;

/// <summary>
/// Which thread runs a nonblocking collective: the program's when it waits within the grace, or blocks on a later
/// collective; the worker when nobody waits for it, after the grace, or at once when the program tests it. The
/// collectives here are the sequence's own functions, which only record where they ran.
/// </summary>
public sealed class CollectiveSequenceTests
{
    private static readonly TimeSpan Long = TimeSpan.FromMinutes(5);

    [Fact]
    public async Task Wait_WithinTheGrace_RunsTheCollectiveOnTheWaitingThread()
    {
        var sequence = new CollectiveSequence(grace: Long);
        var request = sequence.Start(() => System.Environment.CurrentManagedThreadId);

        int waiter = await OnAThreadOfItsOwn(() => request.Wait());

        Assert.Equal(waiter, request.Value);
    }

    [Fact]
    public async Task Wait_ForTheSecondOfTwo_RunsBothHereInTheirOrder()
    {
        var sequence = new CollectiveSequence(grace: Long);
        var order = new List<(string, int)>();
        var first = sequence.Start(() => { order.Add(("first", System.Environment.CurrentManagedThreadId)); return 1; });
        var second = sequence.Start(() => { order.Add(("second", System.Environment.CurrentManagedThreadId)); return 2; });

        int waiter = await OnAThreadOfItsOwn(() => second.Wait());

        Assert.Equal([("first", waiter), ("second", waiter)], order);
        Assert.NotNull(first.Test());
    }

    [Fact]
    public async Task AwaitTurn_RunsTheQueuedCollectivesOnTheCallingThread()
    {
        var sequence = new CollectiveSequence(grace: Long);
        var requests = Enumerable.Range(0, 3).Select(_ => sequence.Start(() => System.Environment.CurrentManagedThreadId)).ToArray();

        int caller = await OnAThreadOfItsOwn(sequence.AwaitTurn);

        Assert.All(requests, request => Assert.NotNull(request.Test()));
        Assert.All(requests, request => Assert.Equal(caller, request.Value));
    }

    [Fact]
    public async Task NobodyWaits_TheWorkerRunsTheCollective_NoSoonerThanTheGrace()
    {
        var grace = TimeSpan.FromMilliseconds(50);
        var sequence = new CollectiveSequence(grace);
        var started = System.Diagnostics.Stopwatch.StartNew();
        var request = sequence.Start(() => (System.Environment.CurrentManagedThreadId, started.Elapsed));

        await request.Completion.AsTask().WaitAsync(TestJob.Timeout);

        var (thread, ranAfter) = request.Value;
        Assert.NotEqual(System.Environment.CurrentManagedThreadId, thread);
        Assert.True(ranAfter >= grace, $"The worker took the collective {ranAfter.TotalMilliseconds:F1} ms after its start, within the {grace.TotalMilliseconds} ms grace.");
    }

    [Fact]
    public async Task Test_HasTheWorkerRunTheCollectiveWithoutTheGrace()
    {
        var sequence = new CollectiveSequence(grace: Long);
        var request = sequence.Start(() => System.Environment.CurrentManagedThreadId);

        request.Test();
        await request.Completion.AsTask().WaitAsync(TestJob.Timeout);

        Assert.NotEqual(System.Environment.CurrentManagedThreadId, request.Value);
    }

    [Fact]
    public async Task WaitAsync_HasTheWorkerRunTheCollectiveWithoutTheGrace()
    {
        var sequence = new CollectiveSequence(grace: Long);
        var request = sequence.Start(() => System.Environment.CurrentManagedThreadId);

        await request.WaitAsync().WaitAsync(TestJob.Timeout);

        Assert.NotEqual(System.Environment.CurrentManagedThreadId, request.Value);
    }

    /// <summary>Runs a blocking <paramref name="call"/> on a thread of its own, bounded by the test timeout; returns that thread's id.</summary>
    private static Task<int> OnAThreadOfItsOwn(Action call) =>
        Task.Factory.StartNew(() =>
        {
            call();
            return System.Environment.CurrentManagedThreadId;
        }, TaskCreationOptions.LongRunning).WaitAsync(TestJob.Timeout);
}
