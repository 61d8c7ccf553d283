namespace Pmpi.Tests.Transport;

/// <summary>
/// Two ranks that talk both ways share one Connect call: the rank that sends first dials, and the other answers on
/// that call's responses; synchronous sends are acknowledged on the same call the other way.
/// </summary>
public sealed class PairStreamTests
{
    [Fact]
    public void PingPong_BothWaysWithSsend_UsesOneConnectCall()
    {
        const int rounds = 20;
        using var job = new LoopbackGrpcJob(2);
        // Beyond StreamSender.ChunkSize, so messages travel as Data and Chunk frames in both directions.
        var large = Enumerable.Range(0, 3 * 1024 * 1024 + 17).Select(i => (byte)i).ToArray();

        Pmpi.Environment.Run(job, world =>
        {
            int peer = 1 - world.Rank;
            for (int round = 0; round < rounds; round++)
            {
                if (world.Rank == 0)
                {
                    world.Ssend(round, peer, tag: 1);
                    Assert.Equal(round + 1000, world.Receive<int>(peer, tag: 2));
                }
                else
                {
                    Assert.Equal(round, world.Receive<int>(peer, tag: 1));
                    world.Ssend(round + 1000, peer, tag: 2);
                }
            }
            if (world.Rank == 0)
            {
                world.Ssend(large, peer, tag: 3);
                Assert.Equal(large, world.Receive<byte[]>(peer, tag: 4));
            }
            else
            {
                Assert.Equal(large, world.Receive<byte[]>(peer, tag: 3));
                world.Ssend(large, peer, tag: 4);
            }
        }, new EnvironmentOptions { Timeout = TestJob.Timeout });

        Assert.Equal(0, job.Started(0)!.StreamsAccepted);
        Assert.Equal(1, job.Started(1)!.StreamsAccepted);
    }
}
