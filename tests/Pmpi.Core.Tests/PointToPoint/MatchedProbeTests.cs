namespace Pmpi.Tests.PointToPoint;

/// <summary>
/// Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv): a probed message is taken out of matching, so threads that
/// share a communicator each receive the message they probed, none twice and none lost.
/// </summary>
public abstract class MatchedProbeTests(Device device) : DeviceSuite(device)
{
    [Fact]
    public void MatchedProbe_TwoThreadsOfOneRankProbeTheSameTag_EachReceivesTheMessageItProbed()
    {
        const int perSender = 40;
        var results = Run(3, world =>
        {
            if (world.Rank != 0)
            {
                for (int i = 0; i < perSender; i++) world.Send(new[] { world.Rank, i, i * world.Rank }, 0, 7);
                return [];
            }
            var received = new List<(int Probed, int[] Payload)>[2];
            var threads = Enumerable.Range(0, 2).Select(t => new Thread(() =>
            {
                received[t] = [];
                for (int i = 0; i < perSender; i++)
                {
                    var message = world.MatchedProbe(Communicator.AnySource, 7);
                    received[t].Add((message.Status.Source, message.Receive<int[]>()));
                }
            })).ToArray();
            foreach (var thread in threads) thread.Start();
            foreach (var thread in threads) Assert.True(thread.Join(TestJob.Timeout), "A probing thread did not finish.");
            return received.SelectMany(list => list).ToArray();
        });

        var all = results[0];
        Assert.Equal(2 * perSender, all.Length);
        Assert.All(all, r => Assert.Equal(r.Probed, r.Payload[0])); // each got the message it probed
        foreach (int sender in new[] { 1, 2 })
            Assert.Equal(Enumerable.Range(0, perSender), all.Where(r => r.Payload[0] == sender).Select(r => r.Payload[1]).Order());
    }

    [Fact]
    public void ImmediateMatchedProbe_NothingYet_IsNullThenTakesTheMessageWithItsCount()
    {
        var results = Run<(bool Before, int Count, double[] Values, bool Again)>(2, world =>
        {
            if (world.Rank == 1)
            {
                world.Receive<int>(0, 1); // rank 0 has probed in vain
                world.Send(new double[] { 1.5, 2.5, 3.5 }, 0, 9);
                return (false, 0, [], false);
            }
            bool before = world.ImmediateMatchedProbe(1, 9) is not null;
            world.Send(0, 1, 1);
            MatchedMessage? message;
            while ((message = world.ImmediateMatchedProbe(1, 9)) is null) Thread.Yield();
            var values = message.Receive<double[]>(out var status);
            bool again = world.ImmediateProbe(1, 9) is not null;
            return (before, status.Count(typeof(double)) ?? -1, values, again);
        });

        var (before, count, values, again) = results[0];
        Assert.Equal((false, 3, false), (before, count, again));
        Assert.Equal([1.5, 2.5, 3.5], values);
    }

    [Fact]
    public void MatchedMessage_ReceivedTwice_ThrowsNamingIt()
    {
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                world.Send("once", 0, 3);
                return;
            }
            var message = world.MatchedProbe(1, 3);
            Assert.Equal("once", message.Receive<string>());
            var error = Assert.Throws<MpiException>(() => message.Receive<string>());
            Assert.Contains("received already", error.Message);
        });
    }

    [Fact]
    public void MatchedProbe_ProcNull_ReceivesNothingAtOnce()
    {
        Run(1, world =>
        {
            var message = world.MatchedProbe(Communicator.ProcNull, 5);
            Assert.Equal(Communicator.ProcNull, message.Status.Source);
            Assert.Equal(0, message.Receive<int>());
        });
    }
}
