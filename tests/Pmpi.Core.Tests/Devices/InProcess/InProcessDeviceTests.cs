using Pmpi.Devices.InProcess;

namespace Pmpi.Tests.Devices.InProcess;

/// <summary>The in-process device's own protocol: eager up to <see cref="InProcessJob.EagerLimit"/>, rendezvous above.</summary>
public class InProcessDeviceTests
{
    [Fact]
    public void Receive_LargeArray_UsesRendezvousAndArrivesIntact()
    {
        // Arrange: above the eager limit, so the message must wait for its receive and be copied from the sender's array.
        var data = Enumerable.Range(0, 4 << 20).Select(i => i * 0.5).ToArray();
        Assert.True(data.Length * sizeof(double) > InProcessJob.EagerLimit);

        var outcome = TestJob.RunInProcess(2, world =>
        {
            if (world.Rank == 0)
            {
                // Act: start the large send, then a small one; rank 1 posts its receive only after the small one.
                var large = world.ImmediateSend(data, 1, 0);
                bool largeDoneBeforeReceive = large.Test() is not null;
                var small = world.ImmediateSend(new[] { 1 }, 1, 1);
                bool smallDoneAtOnce = small.Test() is not null;
                large.Wait();
                return (LargeDoneBeforeReceive: largeDoneBeforeReceive, SmallDoneAtOnce: smallDoneAtOnce, Intact: true);
            }
            world.Receive<int[]>(0, 1);
            return (LargeDoneBeforeReceive: false, SmallDoneAtOnce: false, Intact: data.AsSpan().SequenceEqual(world.Receive<double[]>(0, 0)));
        });

        // Assert: the large send completed only once rank 1 received it (rendezvous); the small one at once (eager).
        Assert.False(outcome[0].LargeDoneBeforeReceive, "The large send completed before its receive was posted: it was buffered, not a rendezvous.");
        Assert.True(outcome[0].SmallDoneAtOnce, "The small send did not complete at once: it was not eager.");
        Assert.True(outcome[1].Intact);
    }
}
