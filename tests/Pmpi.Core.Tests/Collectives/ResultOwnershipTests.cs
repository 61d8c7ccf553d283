namespace Pmpi.Tests.Collectives;

/// <summary>A collective's result is the caller's own array, never its input (MPI's send and receive buffers are distinct).</summary>
public abstract class ResultOwnershipTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ArrayReductions_InputChangedAfterwards_ResultsUnchanged(int size)
    {
        // Act: every rank overwrites its inputs after each call.
        var results = Run(size, world =>
        {
            int[] forReduce = [world.Rank], forAllreduce = [world.Rank], forScan = [world.Rank];
            var reduced = world.Reduce(forReduce, Operation<int>.Add, 0);
            var allReduced = world.Allreduce(forAllreduce, Operation<int>.Add);
            var scanned = world.Scan(forScan, Operation<int>.Add);
            forReduce[0] = forAllreduce[0] = forScan[0] = -100;
            return (reduced, allReduced, scanned);
        });

        // Assert
        int total = size * (size - 1) / 2;
        Assert.Equal([total], results[0].reduced!);
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal([total], results[rank].allReduced);
            Assert.Equal([rank * (rank + 1) / 2], results[rank].scanned);
        }
    }
}
