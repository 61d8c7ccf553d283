namespace Pmpi.Tests.PointToPoint;

public abstract class NonblockingTests(Device device) : DeviceSuite(device)
{
    [Fact]
    public void ImmediateReceive_PostedFirst_CompletesWithValue()
    {
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                var request = world.ImmediateReceive<int>(0, 5);
                world.Send(true, 0, 1);
                var status = request.Wait();
                Assert.Equal(99, request.Value);
                Assert.Equal(99, request.GetValue());
                Assert.Equal((0, 5, false), (status.Source, status.Tag, status.Cancelled));
            }
            else
            {
                world.Receive<bool>(1, 1);
                world.Send(99, 1, 5);
            }
        });
    }

    [Fact]
    public void ImmediateReceive_IntoArray_FillsCallerArray()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.ImmediateSend(new[] { 1f, 2f }, 1, 0).Wait();
            else
            {
                var buffer = new float[3];
                var request = world.ImmediateReceive(0, 0, buffer);
                Assert.Equal(2, request.Wait().Count());
                Assert.Same(buffer, request.Value);
                Assert.Equal([1f, 2f, 0f], buffer);
            }
        });
    }

    [Fact]
    public void Cancel_PendingReceive_ReportsCancelledAndLosesNothing()
    {
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                var request = world.ImmediateReceive<int>(0, 3);
                request.Cancel();
                Assert.True(request.Wait().Cancelled);
                world.Send(true, 0, 1);
                Assert.Equal(7, world.Receive<int>(0, 3));
            }
            else
            {
                world.Receive<bool>(1, 1);
                world.Send(7, 1, 3);
            }
        });
    }

    [Fact]
    public void ImmediateReceive_LargeArraysIntoTheCallersArrays_EachArrayHoldsItsMessage()
    {
        // 1 MB arrays, which links read straight into the receive's array; a window of them, as a bandwidth test posts.
        const int Length = 128 * 1024, Window = 4;
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                var arrays = Enumerable.Range(0, Window).Select(_ => new double[Length]).ToArray();
                var requests = arrays.Select(array => world.ImmediateReceive(0, 4, array)).ToArray();
                for (int i = 0; i < Window; i++)
                {
                    var completed = requests[i].Wait();
                    Assert.Same(arrays[i], requests[i].Value);
                    Assert.Equal(Length, completed.Count());
                    Assert.True(arrays[i].AsSpan().IndexOfAnyExcept(i + 0.5) < 0, $"array {i} does not hold message {i}");
                }
            }
            else
            {
                for (int i = 0; i < Window; i++) world.Send(Enumerable.Repeat(i + 0.5, Length).ToArray(), 1, 4);
            }
        });
    }

    [Fact]
    public void Cancel_PendingReceiveIntoALargeArray_LeavesTheArrayUntouchedAndTheMessageForTheNextReceive()
    {
        const int Length = 128 * 1024;
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                var cancelledInto = new double[Length];
                var request = world.ImmediateReceive(0, 3, cancelledInto);
                request.Cancel();
                Assert.True(request.Wait().Cancelled);
                world.Send(true, 0, 1);
                var into = new double[Length];
                world.ImmediateReceive(0, 3, into).Wait();
                Assert.True(into.AsSpan().IndexOfAnyExcept(2.5) < 0, "the message did not reach the receive after the cancelled one");
                Assert.True(cancelledInto.AsSpan().IndexOfAnyExcept(0.0) < 0, "the cancelled receive's array was written");
            }
            else
            {
                world.Receive<bool>(1, 1);
                world.Send(Enumerable.Repeat(2.5, Length).ToArray(), 1, 3);
            }
        });
    }

    [Fact]
    public void Test_BeforeArrival_ReturnsNull()
    {
        Run(2, world =>
        {
            if (world.Rank == 1)
            {
                var request = world.ImmediateReceive<int>(0, 3);
                Assert.Null(request.Test());
                world.Send(true, 0, 1);
                request.Wait();
                Assert.NotNull(request.Test());
            }
            else
            {
                world.Receive<bool>(1, 1);
                world.Send(1, 1, 3);
            }
        });
    }

    [Fact]
    public void RequestList_WaitAllAnySome_CompleteEveryRequest()
    {
        Run(4, world =>
        {
            if (world.Rank != 0)
            {
                world.Receive<bool>(0, 9);
                world.Send(world.Rank * 10, 0, world.Rank);
                world.Send(world.Rank * 100, 0, 100 + world.Rank);
                return;
            }
            var list = new RequestList();
            var requests = Enumerable.Range(1, 3).Select(r => world.ImmediateReceive<int>(r, r)).ToList();
            requests.ForEach(list.Add);
            Assert.Null(list.TestAll());
            Assert.Null(list.TestAny());
            for (int r = 1; r < world.Size; r++) world.Send(true, r, 9);

            var first = list.WaitAny();
            Assert.Contains(first, requests);
            var some = list.WaitSome();
            Assert.NotEmpty(some);
            list.WaitAll();
            Assert.Equal(0, list.Count);
            Assert.Equal([10, 20, 30], requests.Select(r => r.Value));

            var second = new RequestList();
            for (int r = 1; r < world.Size; r++) second.Add(world.ImmediateReceive<int>(r, 100 + r));
            var statuses = second.WaitAll();
            Assert.Equal([1, 2, 3], statuses.Select(s => s.Source));
            Assert.Empty(second.TestSome());
        });
    }

    [Fact]
    public async Task WaitAsync_CompletesWhenMessageArrives()
    {
        await Task.Run(() => Run(2, world =>
        {
            if (world.Rank == 0) world.Send(5L, 1, 0);
            else
            {
                var request = world.ImmediateReceive<long>(0, 0);
                var status = request.WaitAsync().WaitAsync(TestJob.Timeout).GetAwaiter().GetResult();
                Assert.Equal(0, status.Source);
                Assert.Equal(5L, request.Value);
            }
        })).WaitAsync(TestJob.Timeout);
    }

    [Fact]
    public void Probe_ThenReceive_SizesBufferFromStatus()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new short[] { 1, 2, 3, 4, 5 }, 1, 8);
            else
            {
                var status = world.Probe(Communicator.AnySource, Communicator.AnyTag);
                Assert.Equal((0, 8, 5), (status.Source, status.Tag, status.Count(typeof(short)) ?? -1));
                Assert.Null(status.Count(typeof(int)));
                var buffer = new short[status.Count(typeof(short))!.Value];
                world.Receive(status.Source, status.Tag, ref buffer);
                Assert.Equal([1, 2, 3, 4, 5], buffer);
                Assert.Null(world.ImmediateProbe(0, 8));
            }
        });
    }

    [Fact]
    public void ImmediateProbe_AfterArrival_ReturnsStatusWithoutReceiving()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                world.Send("x", 1, 2);
                world.Send(true, 1, 3);
            }
            else
            {
                world.Receive<bool>(0, 3);
                var status = world.ImmediateProbe(0, Communicator.AnyTag);
                Assert.NotNull(status);
                Assert.Equal(2, status.Tag);
                Assert.Equal(1, status.Count(typeof(string)));
                Assert.Equal("x", world.Receive<string>(0, 2));
            }
        });
    }
}
