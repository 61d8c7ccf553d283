namespace Pmpi.Tests.Collectives;

/// <summary>
/// The nonblocking collectives (MPI_Ibarrier ... MPI_Ialltoallv): each gives what its blocking form gives, they
/// progress while the program computes, and they keep their place in the communicator's order of collectives.
/// </summary>
public abstract class NonblockingCollectiveTests(Device device) : DeviceSuite(device)
{
    private const int ByBlocks = 262_144; // 2 MB of doubles: an allreduce by blocks at 4 ranks

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4)]
    public void EveryImmediateCollective_GivesWhatItsBlockingFormGives(int size)
    {
        var results = Run(size, world =>
        {
            int rank = world.Rank;
            int[] counts = [.. Enumerable.Range(1, world.Size)];
            var mine = Enumerable.Repeat(rank, rank + 1).ToArray();
            int root = world.Size - 1;
            // Started all at once, waited for in reverse: each keeps its place in the order.
            var barrier = world.ImmediateBarrier();
            var broadcast = world.ImmediateBroadcast(rank == root ? "from the root" : null!, root);
            var broadcastArray = world.ImmediateBroadcast(rank == 0 ? new[] { 1.5, 2.5 } : new double[2], 0);
            var reduce = world.ImmediateReduce(rank + 1, Operation<int>.Multiply, root);
            var reduceArray = world.ImmediateReduce(new[] { rank, 1 }, Operation<int>.Add, 0);
            var allreduce = world.ImmediateAllreduce(rank, Operation<int>.Max);
            var allreduceArray = world.ImmediateAllreduce(Enumerable.Repeat((double)rank, ByBlocks).ToArray(), Operation<double>.Add);
            var gather = world.ImmediateGather(rank * 10, root);
            var gatherv = world.ImmediateGatherFlattened(mine, counts, 0);
            var scatter = world.ImmediateScatter(rank == 0 ? Enumerable.Range(100, world.Size).ToArray() : null, 0);
            var scatterv = world.ImmediateScatterFromFlattened(rank == 0 ? Enumerable.Range(0, counts.Sum()).ToArray() : null, counts, 0);
            var allgather = world.ImmediateAllgather($"r{rank}");
            var allgatherv = world.ImmediateAllgatherFlattened(mine, counts);
            var alltoall = world.ImmediateAlltoall(Enumerable.Range(0, world.Size).Select(to => rank * 100 + to).ToArray());
            var alltoallv = world.ImmediateAlltoallFlattened(Enumerable.Repeat(rank, world.Size * 2).ToArray(), [.. Enumerable.Repeat(2, world.Size)], [.. Enumerable.Repeat(2, world.Size)]);
            var scan = world.ImmediateScan(rank + 1, Operation<int>.Add);
            var exscan = world.ImmediateExclusiveScan(rank + 1, Operation<int>.Add);
            Request[] all = [barrier, broadcast, broadcastArray, reduce, reduceArray, allreduce, allreduceArray, gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, scan, exscan];
            foreach (var request in all.Reverse()) request.Wait();
            return (broadcast.Value, broadcastArray.Value, reduce.Value, reduceArray.Value, allreduce.Value, allreduceArray.Value[ByBlocks - 1],
                gather.Value, gatherv.Value, scatter.Value, scatterv.Value, allgather.Value, allgatherv.Value, alltoall.Value, alltoallv.Value, scan.Value, exscan.Value);
        });

        int n = size, last = size - 1;
        int[] gathered = [.. Enumerable.Range(0, n).SelectMany(r => Enumerable.Repeat(r, r + 1))];
        for (int rank = 0; rank < n; rank++)
        {
            var r = results[rank];
            Assert.Equal("from the root", r.Item1);
            Assert.Equal([1.5, 2.5], r.Item2);
            Assert.Equal(rank == last ? Enumerable.Range(1, n).Aggregate(1, (a, b) => a * b) : 0, r.Item3);
            Assert.Equal(rank == 0 ? [n * (n - 1) / 2, n] : null, r.Item4);
            Assert.Equal(last, r.Item5);
            Assert.Equal(n * (n - 1) / 2.0, r.Item6);
            Assert.Equal(rank == last ? [.. Enumerable.Range(0, n).Select(x => x * 10)] : null, r.Item7);
            Assert.Equal(rank == 0 ? gathered : null, r.Item8);
            Assert.Equal(100 + rank, r.Item9);
            int start = rank * (rank + 1) / 2;
            Assert.Equal(Enumerable.Range(start, rank + 1), r.Item10);
            Assert.Equal(Enumerable.Range(0, n).Select(x => $"r{x}"), r.Item11);
            Assert.Equal(gathered, r.Item12);
            Assert.Equal(Enumerable.Range(0, n).Select(from => from * 100 + rank), r.Item13);
            Assert.Equal(Enumerable.Range(0, n).SelectMany(from => new[] { from, from }), r.Item14);
            Assert.Equal((rank + 1) * (rank + 2) / 2, r.Item15);
            Assert.Equal(rank * (rank + 1) / 2, r.Item16);
        }
    }

    [Theory]
    [InlineData(2)]
    [InlineData(4)]
    public void ImmediateAllreduce_CompletesWhileEveryRankComputes_WithoutAnotherCall(int size)
    {
        // Every rank starts the allreduce, then computes and looks at the request's task, which makes no progress of
        // its own: only progress made apart from the program's calls can complete it. Rank 0 starts last, so the
        // others are computing when it joins. Should progress need a call, this fails by the loop's bound, not a hang.
        var results = Run(size, world =>
        {
            if (world.Rank == 0) Thread.Sleep(100);
            var values = Enumerable.Repeat(world.Rank + 1.0, 100_000).ToArray();
            var request = world.ImmediateAllreduce(values, Operation<double>.Add);
            var completed = request.WaitAsync();
            long iterations = 0;
            double work = 0;
            var bound = DateTime.UtcNow + TestJob.Timeout / 2;
            while (!completed.IsCompleted && DateTime.UtcNow < bound)
            {
                for (int i = 0; i < 1000; i++) work += Math.Sqrt(i + work % 7);
                iterations++;
            }
            return (completed.IsCompleted, iterations, request.Value[0], work > 0);
        });

        double sum = size * (size + 1) / 2.0;
        Assert.All(results, r => Assert.True(r.IsCompleted, "The allreduce did not complete while the rank computed."));
        Assert.All(results, r => Assert.Equal(sum, r.Item3));
        Assert.True(results.Skip(1).All(r => r.iterations > 0), "The later ranks computed before the allreduce completed.");
    }

    [Theory]
    [InlineData(2)]
    [InlineData(4)]
    public void ImmediateAllreduce_IntoAResultArray_FillsItInPlaceToo_AndItIsTheValue(int size)
    {
        var results = Run(size, world =>
        {
            var values = Enumerable.Repeat(world.Rank + 1.0, ByBlocks).ToArray();
            var result = world.Rank == 1 ? values : new double[ByBlocks];
            var request = world.ImmediateAllreduce(values, Operation<double>.Add, result);
            return (ReferenceEquals(request.Value, result), result.Distinct().Single());
        });

        Assert.All(results, r => Assert.Equal((true, size * (size + 1) / 2.0), r));
    }

    [Fact]
    public void ImmediateAllreduce_IntoAResultOfAnotherLength_FailsAtTheStartNamingIt()
    {
        var errors = Run(2, world =>
            Assert.Throws<MpiException>(() => world.ImmediateAllreduce(new int[3], Operation<int>.Add, new int[2 + world.Rank * 2])));

        Assert.All(errors, e => Assert.Equal(ErrorClass.InvalidCount, e.ErrorClass));
        Assert.Contains("'result' must hold 3 elements; it holds 2", errors[0].Message);
    }

    [Fact]
    public void ImmediateCollectives_StartedBeforeABlockingOne_CompleteFirst_AndMatchAnotherRanksBlockingForm()
    {
        var results = Run(3, world =>
        {
            // Rank 2 calls the blocking forms where the others start nonblocking ones: MPI leaves that erroneous;
            // PMPI runs both as one algorithm in one order, so it works.
            if (world.Rank == 2)
            {
                int sum = world.Allreduce(world.Rank, Operation<int>.Add);
                var all = world.Allgather(world.Rank);
                world.Barrier();
                return (sum, all, world.Allreduce(1, Operation<int>.Add));
            }
            var first = world.ImmediateAllreduce(world.Rank, Operation<int>.Add);
            var second = world.ImmediateAllgather(world.Rank);
            world.Barrier(); // blocking, after two outstanding: waits its turn
            int after = world.Allreduce(1, Operation<int>.Add);
            Assert.NotNull(first.Test());
            Assert.NotNull(second.Test());
            return (first.Value, second.Value, after);
        });

        Assert.All(results, r => Assert.Equal((3, "0 1 2", 3), (r.Item1, string.Join(' ', r.Item2), r.Item3)));
    }

    [Fact]
    public void ImmediateAllreduce_RanksPassDifferentOperations_FailsAtTheWaitNamingBoth()
    {
        var thrown = Assert.ThrowsAny<Exception>(() => Run(3, world =>
        {
            var request = world.ImmediateAllreduce(world.Rank, world.Rank == 0 ? Operation<int>.Add : Operation<int>.Max);
            request.Wait();
        }));

        var mismatch = Flatten(thrown).OfType<MpiException>().FirstOrDefault(e => e.ErrorClass == ErrorClass.CollectiveMismatch);
        Assert.True(mismatch is not null, $"No CollectiveMismatch error among: {thrown}");
        Assert.Contains("Allreduce by whole values of the predefined Add", mismatch.Message);
        Assert.Contains("Allreduce by whole values of the predefined Max", mismatch.Message);
    }

    [Fact]
    public void ImmediateAllreduce_UsersOperationThrows_TheWaitThrowsItsException()
    {
        var results = Run(2, world =>
        {
            var request = world.ImmediateAllreduce(world.Rank, (a, b) => throw new InvalidOperationException("the user's operation failed"));
            var error = Record.Exception(() => request.Wait());
            return error?.Message;
        });

        Assert.Contains("the user's operation failed", results.Where(m => m is not null));
    }

    [Fact]
    public void CollectiveRequest_Cancel_ThrowsInvalidRequest_AndTheCollectiveStillCompletes()
    {
        var results = Run(2, world =>
        {
            var request = world.ImmediateAllreduce(world.Rank + 1, Operation<int>.Add);
            var error = Assert.Throws<MpiException>(request.Cancel);
            return (error.ErrorClass, request.Value);
        });

        Assert.All(results, r => Assert.Equal((ErrorClass.InvalidRequest, 3), r));
    }

    [Fact]
    public void ImmediateCollectives_OnTwoCommunicators_StartedInOppositeOrders_BothComplete()
    {
        // MPI orders collectives per communicator only: rank 0 starts world's first, rank 1 the duplicate's.
        var results = Run(2, world =>
        {
            using var copy = world.Dup();
            CollectiveRequest<int> onWorld, onCopy;
            if (world.Rank == 0)
            {
                onWorld = world.ImmediateAllreduce(1, Operation<int>.Add);
                onCopy = copy.ImmediateAllreduce(10, Operation<int>.Add);
            }
            else
            {
                onCopy = copy.ImmediateAllreduce(10, Operation<int>.Add);
                onWorld = world.ImmediateAllreduce(1, Operation<int>.Add);
            }
            return (onWorld.Value, onCopy.Value);
        });

        Assert.All(results, r => Assert.Equal((2, 20), r));
    }

    [Fact]
    public void Dispose_WithACollectiveOutstanding_LetsItFinish()
    {
        var results = Run(3, world =>
        {
            var copy = world.Dup();
            var request = copy.ImmediateAllgather(world.Rank);
            copy.Dispose();
            return request.Value;
        });

        Assert.All(results, r => Assert.Equal([0, 1, 2], r));
    }

    private static IEnumerable<Exception> Flatten(Exception error) =>
        error is AggregateException aggregate ? aggregate.InnerExceptions.SelectMany(Flatten)
        : error.InnerException is { } inner ? [error, .. Flatten(inner)] : [error];
}
