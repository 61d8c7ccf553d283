namespace Pmpi.Tests.PointToPoint;

public record struct Particle(double X, double Y, int Id);

public sealed record Job(string Name, List<int> Steps, Dictionary<string, double> Weights);

public abstract class SendReceiveTests(Device device) : DeviceSuite(device)
{
    [Fact]
    public void Receive_Value_ReturnsWhatWasSent()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(3.25, dest: 1, tag: 7);
            else Assert.Equal(3.25, world.Receive<double>(source: 0, tag: 7));
        });
    }

    [Fact]
    public void Receive_ArrayStructStringAndObject_RoundTrip()
    {
        var job = new Job("matmul", [1, 2, 3], new() { ["alpha"] = 0.5 });
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                world.Send(new[] { 1.0, 2.0, 3.0 }, 1, 1);
                world.Send(new Particle(1.5, -2, 9), 1, 2);
                world.Send(new[] { new Particle(1, 2, 3), new Particle(4, 5, 6) }, 1, 3);
                world.Send("héllo, wörld", 1, 4);
                world.Send(job, 1, 5);
                world.Send(new[] { "a", "b" }, 1, 6);
            }
            else
            {
                Assert.Equal([1.0, 2.0, 3.0], world.Receive<double[]>(0, 1));
                Assert.Equal(new Particle(1.5, -2, 9), world.Receive<Particle>(0, 2));
                Assert.Equal([new Particle(1, 2, 3), new Particle(4, 5, 6)], world.Receive<Particle[]>(0, 3));
                Assert.Equal("héllo, wörld", world.Receive<string>(0, 4));
                var received = world.Receive<Job>(0, 5);
                Assert.Equal(job.Name, received.Name);
                Assert.Equal(job.Steps, received.Steps);
                Assert.Equal(job.Weights, received.Weights);
                Assert.Equal(["a", "b"], world.Receive<string[]>(0, 6));
            }
        });
    }

    [Fact]
    public void Receive_OutForms_ReportStatus()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                world.Send(new[] { 5, 6, 7 }, 1, 3);
                world.Send(11, 1, 4);
            }
            else
            {
                world.Receive(Communicator.AnySource, Communicator.AnyTag, out int[] values, out CompletedStatus status);
                Assert.Equal([5, 6, 7], values);
                Assert.Equal((0, 3, 3), (status.Source, status.Tag, status.Count()));
                world.Receive(0, 4, out int single);
                Assert.Equal(11, single);
            }
        });
    }

    [Fact]
    public void Receive_IntoLargerBuffer_FillsFrontAndCounts()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new[] { 1, 2 }, 1, 0);
            else
            {
                var buffer = new int[4];
                world.Receive(0, 0, ref buffer, out var status);
                Assert.Equal([1, 2, 0, 0], buffer);
                Assert.Equal(2, status.Count());
            }
        });
    }

    [Fact]
    public void Receive_IntoNullBuffer_Allocates()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new long[] { 4, 5 }, 1, 0);
            else
            {
                long[] buffer = null!;
                world.Receive(0, 0, ref buffer);
                Assert.Equal([4L, 5L], buffer);
            }
        });
    }

    [Fact]
    public void Receive_LargeArray_ArrivesIntact()
    {
        var data = Enumerable.Range(0, 4 << 20).Select(i => i * 0.5).ToArray();
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(data, 1, 0);
            else Assert.Equal(data, world.Receive<double[]>(0, 0));
        });
    }

    [Fact]
    public void Send_ToSelf_IsBufferedEvenWhenLarge()
    {
        Run(1, world =>
        {
            var data = new byte[1 << 20];
            data[^1] = 9;
            world.Send(data, 0, 0);
            Assert.Equal(9, world.Receive<byte[]>(0, 0)[^1]);
        });
    }

    [Fact]
    public void Send_SmallMessage_CompletesBeforeReceiveIsPosted()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                world.Send(1, 1, tag: 1);
                world.Send(2, 1, tag: 2);
            }
            else
            {
                Assert.Equal(2, world.Receive<int>(0, 2));
                Assert.Equal(1, world.Receive<int>(0, 1));
            }
        });
    }

    [Fact]
    public void Ssend_ReturnsOnlyAfterReceiverMatched()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                var request = world.ImmediateSsend(42, 1, 1);
                Thread.Sleep(50);
                Assert.Null(request.Test());
                world.Send("go", 1, 2);
                request.Wait();
                world.Ssend(43, 1, 3);
                Assert.True(world.Receive<bool>(1, 4));
            }
            else
            {
                Assert.Equal("go", world.Receive<string>(0, 2));
                Assert.Equal(42, world.Receive<int>(0, 1));
                Assert.Equal(43, world.Receive<int>(0, 3));
                world.Send(true, 0, 4);
            }
        });
    }

    [Fact]
    public void Receive_FromOneSender_NeverReordersWithinTag()
    {
        Run(4, world =>
        {
            const int count = 2000;
            if (world.Rank != 0)
            {
                for (int i = 0; i < count; i++) world.Send(i, 0, tag: i % 2);
                return;
            }
            var next = new int[world.Size, 2];
            for (int i = 0; i < count * (world.Size - 1); i++)
            {
                world.Receive(Communicator.AnySource, Communicator.AnyTag, out int value, out CompletedStatus status);
                Assert.Equal(status.Tag, value % 2);
                Assert.True(value >= next[status.Source, status.Tag], $"message {value} from rank {status.Source} overtook a later one");
                next[status.Source, status.Tag] = value + 1;
            }
        });
    }

    [Fact]
    public void SendReceive_RingShift_EveryRankGetsLeftNeighbour()
    {
        var results = Run(5, world =>
            world.SendReceive<int, int>(world.Rank, (world.Rank + 1) % world.Size, 0, (world.Rank + world.Size - 1) % world.Size, 0, out _));
        Assert.Equal([4, 0, 1, 2, 3], results);
    }

    [Fact]
    public void SendReceive_LargeArraysBothWays_DoesNotDeadlock()
    {
        Run(2, world =>
        {
            var mine = Enumerable.Repeat((double)world.Rank, 1 << 20).ToArray();
            world.SendReceive(mine, 1 - world.Rank, 0, out double[] theirs);
            Assert.All(theirs, v => Assert.Equal(1 - world.Rank, v));
        });
    }

    [Fact]
    public async Task ReceiveAsync_CompletesWithoutBlockingThread()
    {
        var task = Task.Run(() => Run(2, world =>
        {
            if (world.Rank == 0) world.Send("async", 1, 0);
            else Assert.Equal("async", world.ReceiveAsync<string>(0, 0).WaitAsync(TestJob.Timeout).GetAwaiter().GetResult());
        }));
        await task.WaitAsync(TestJob.Timeout);
    }
}
