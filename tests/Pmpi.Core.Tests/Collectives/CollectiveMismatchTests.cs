namespace Pmpi.Tests.Collectives;

/// <summary>
/// Ranks of one collective that disagree (operation, root, count, or the collective itself) end the job at once with
/// an error naming what each side did (<see cref="ErrorClass.CollectiveMismatch"/>), never a hang; the job's timeout
/// is a minute, so a hang fails these tests by time.
/// </summary>
public abstract class CollectiveMismatchTests(Device device) : DeviceSuite(device)
{
    private const int Large = 262_144; // 2 MB of doubles: by blocks at 4 ranks

    [Fact]
    public void Allreduce_LargeArray_PredefinedSumBesideAUsersOperation_FailsNamingBoth()
    {
        var error = Fails(4, world =>
        {
            var values = new double[Large];
            world.Allreduce(values, world.Rank < 2 ? Operation<double>.Add : (a, b) => a - b);
        });

        Assert.Contains("of the predefined Add", error.Message);
        Assert.Contains("of a user-defined operation", error.Message);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Allreduce_Value_SumBesideMax_FailsNamingBoth(int size)
    {
        var error = Fails(size, world => world.Allreduce(world.Rank, world.Rank % 2 == 0 ? Operation<int>.Add : Operation<int>.Max));

        Assert.Contains("Allreduce by whole values of the predefined Add", error.Message);
        Assert.Contains("Allreduce by whole values of the predefined Max", error.Message);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(4)]
    public void Reduce_RanksNameDifferentRoots_FailsNamingBoth(int size)
    {
        var error = Fails(size, world => world.Reduce(1.0, Operation<double>.Add, root: world.Rank % 2));

        Assert.Contains("from root 0", error.Message);
        Assert.Contains("from root 1", error.Message);
    }

    [Fact]
    public void Allreduce_OneRanksArrayLonger_FailsNamingTheAlgorithmsItsLengthChose()
    {
        var error = Fails(4, world => world.Allreduce(new double[world.Rank == 3 ? 8 : Large], Operation<double>.Add));

        Assert.Contains("Allreduce by blocks", error.Message);
        Assert.Contains("Allreduce by whole values", error.Message);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void DifferentCollectives_BarrierBesideAllgather_FailsNamingBoth(int size)
    {
        var error = Fails(size, world =>
        {
            if (world.Rank == 0) world.Barrier();
            else world.Allgather(world.Rank);
        });

        Assert.Contains("Barrier", error.Message);
        Assert.Contains("Allgather", error.Message);
    }

    [Fact]
    public void Scan_UsersOperationBesideSum_FailsNamingBoth()
    {
        var error = Fails(3, world => world.Scan(2L, world.Rank == 1 ? (a, b) => a * b + 1 : Operation<long>.Add));

        Assert.Contains("Scan of a user-defined operation", error.Message);
        Assert.Contains("Scan of the predefined Add", error.Message);
    }

    [Fact]
    public void Allreduce_OnACommunicatorInReverseOrder_NamesTheWorldRanksToo()
    {
        var error = Fails(3, world =>
        {
            var reversed = world.Split(0, -world.Rank)!; // rank 2 - world rank
            reversed.Allreduce(1, world.Rank == 1 ? Operation<int>.Max : Operation<int>.Add);
        });

        Assert.Contains("(world rank ", error.Message);
        Assert.Contains(", this rank, awaits Allreduce by whole values", error.Message);
    }

    /// <summary>Runs the job, which must fail, and gives the rank's error that says the ranks disagree.</summary>
    private MpiException Fails(int size, Action<Intracommunicator> body)
    {
        var thrown = Assert.ThrowsAny<Exception>(() => Run(size, body));
        var error = Flatten(thrown).OfType<MpiException>().FirstOrDefault(e => e.ErrorClass == ErrorClass.CollectiveMismatch);
        Assert.True(error is not null, $"No CollectiveMismatch error among: {thrown}");
        Assert.Contains("Ranks disagree in a collective: rank ", error.Message);
        return error;
    }

    private static IEnumerable<Exception> Flatten(Exception error) =>
        error is AggregateException aggregate ? aggregate.InnerExceptions.SelectMany(Flatten)
        : error.InnerException is { } inner ? [error, .. Flatten(inner)] : [error];
}
