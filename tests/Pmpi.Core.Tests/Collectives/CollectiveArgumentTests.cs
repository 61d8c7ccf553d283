using System.Globalization;

namespace Pmpi.Tests.Collectives;

public abstract class CollectiveArgumentTests(Device device) : DeviceSuite(device)
{
    private static readonly string[] RootedCollectives =
    [
        "Broadcast value", "Broadcast array", "Gather", "GatherFlattened counts", "GatherFlattened", "Scatter",
        "ScatterFromFlattened", "Reduce value", "Reduce array",
    ];

    /// <summary>Each collective with a root (named as <see cref="CallRooted"/> knows them), at every size of TestJob.Sizes.</summary>
    public static TheoryData<string, int> RootedCollectivesAndSizes
    {
        get
        {
            var data = new TheoryData<string, int>();
            foreach (var collective in RootedCollectives)
                foreach (var size in new[] { 1, 2, 3, 4, 7, 8 }) data.Add(collective, size);
            return data;
        }
    }

    [Theory]
    [MemberData(nameof(RootedCollectivesAndSizes))]
    public void RootedCollective_RootOutsideCommunicator_ThrowsInvalidRankNamingIt(string collective, int size)
    {
        // Act: every rank checks the root before it communicates, so every rank throws and the job ends.
        var errors = Run(size, world =>
            new[] { -1, size }.Select(root => Assert.Throws<MpiException>(() => CallRooted(world, collective, root))).ToArray());

        // Assert
        Assert.All(errors, perRank =>
        {
            Assert.All(perRank, error => Assert.Equal(ErrorClass.InvalidRank, error.ErrorClass));
            Assert.Contains("Rank -1 ", perRank[0].Message);
            Assert.Contains($"Rank {size.ToString(CultureInfo.InvariantCulture)} ", perRank[1].Message);
            Assert.All(perRank, error => Assert.Contains("root", error.Message));
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Scatter_RootArrayOfWrongLength_ThrowsInvalidCount(int size)
    {
        // Act: only the root checks its array, so the job fails with the root's error.
        var error = Assert.Throws<MpiException>(() => Run(size, world =>
            world.Scatter(world.Rank == size - 1 ? new int[size + 1] : null, size - 1)));

        // Assert
        AssertCause(error, size - 1, ErrorClass.InvalidCount, "'values'", $"{size} elements", $"holds {size + 1}");
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_CountsOfWrongLengthOrNegative_ThrowsInvalidCount(int size)
    {
        // Act
        var errors = Run(size, world => new[]
        {
            Assert.Throws<MpiException>(() => world.ScatterFromFlattened(new int[size], new int[size + 1], 0)),
            Assert.Throws<MpiException>(() => world.ScatterFromFlattened(new int[size], [.. Enumerable.Repeat(1, size - 1), -1], 0)),
        });

        // Assert
        Assert.All(errors.SelectMany(perRank => perRank), error =>
        {
            Assert.Equal(ErrorClass.InvalidCount, error.ErrorClass);
            Assert.Contains("'counts'", error.Message);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_RootArrayNotSumOfCounts_ThrowsInvalidCount(int size)
    {
        // Act
        var error = Assert.Throws<MpiException>(() => Run(size, world =>
            world.ScatterFromFlattened(world.Rank == 0 ? new int[2 * size - 1] : null, [.. Enumerable.Repeat(2, size)], 0)));

        // Assert
        AssertCause(error, 0, ErrorClass.InvalidCount, "'values'", $"{2 * size} elements");
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void GatherFlattened_CountsNotMatchingArrays_ThrowsInvalidCountAtRoot(int size)
    {
        // Act: every rank sends two elements but the root expects one from each.
        var error = Assert.Throws<MpiException>(() => Run(size, world =>
            world.GatherFlattened(new int[2], [.. Enumerable.Repeat(1, size)], 0)));

        // Assert
        AssertCause(error, 0, ErrorClass.InvalidCount, $"{size} elements", $"{2 * size} arrived");
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void GatherFlattened_RootCountsOfWrongLength_ThrowsInvalidCount(int size)
    {
        // Act
        var error = Assert.Throws<MpiException>(() => Run(size, world =>
            world.GatherFlattened(new int[1], new int[size + 1], 0)));

        // Assert
        AssertCause(error, 0, ErrorClass.InvalidCount, "'counts'", $"{size} non-negative counts");
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Alltoall_ArrayOfWrongLength_ThrowsInvalidCount(int size)
    {
        // Act
        var errors = Run(size, world => Assert.Throws<MpiException>(() => world.Alltoall(new double[size + 1])));

        // Assert
        Assert.All(errors, error =>
        {
            Assert.Equal(ErrorClass.InvalidCount, error.ErrorClass);
            Assert.Contains($"must hold {size} elements; it holds {size + 1}", error.Message);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void AlltoallFlattened_BadCountsOrLength_ThrowsInvalidCount(int size)
    {
        // Arrange
        var ones = Enumerable.Repeat(1, size).ToArray();

        // Act
        var errors = Run(size, world =>
        {
            var twos = Enumerable.Repeat(2, size).ToArray();
            var selfMismatch = ones.ToArray();
            selfMismatch[world.Rank] = 2;
            return new[]
            {
                Assert.Throws<MpiException>(() => world.AlltoallFlattened(new int[size], new int[size - 1], ones)),
                Assert.Throws<MpiException>(() => world.AlltoallFlattened(new int[size], ones, new int[size + 1])),
                Assert.Throws<MpiException>(() => world.AlltoallFlattened(new int[size], twos, twos)),
                Assert.Throws<MpiException>(() => world.AlltoallFlattened(new int[size], ones, selfMismatch)),
            };
        });

        // Assert
        Assert.All(errors, perRank =>
        {
            Assert.All(perRank, error => Assert.Equal(ErrorClass.InvalidCount, error.ErrorClass));
            Assert.Contains("'sendCounts'", perRank[0].Message);
            Assert.Contains("'receiveCounts'", perRank[1].Message);
            Assert.Contains("'values'", perRank[2].Message);
            Assert.Contains("to itself", perRank[3].Message);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void ReduceScatter_BadCountsOrLength_ThrowsInvalidCount(int size)
    {
        // Act
        var errors = Run(size, world => new[]
        {
            Assert.Throws<MpiException>(() => world.ReduceScatter(new int[size], Operation<int>.Add, new int[size + 1])),
            Assert.Throws<MpiException>(() => world.ReduceScatter(new int[size + 1], Operation<int>.Add, [.. Enumerable.Repeat(1, size)])),
        });

        // Assert
        Assert.All(errors, perRank =>
        {
            Assert.All(perRank, error => Assert.Equal(ErrorClass.InvalidCount, error.ErrorClass));
            Assert.Contains("'counts'", perRank[0].Message);
            Assert.Contains("'values'", perRank[1].Message);
        });
    }

    private static void CallRooted(Intracommunicator world, string collective, int root)
    {
        int value = 1;
        var array = new[] { 1, 2 };
        var counts = Enumerable.Repeat(1, world.Size).ToArray();
        var perRank = new int[world.Size];
        switch (collective)
        {
            case "Broadcast value": world.Broadcast(ref value, root); break;
            case "Broadcast array": world.Broadcast(ref array, root); break;
            case "Gather": world.Gather(value, root); break;
            case "GatherFlattened counts": world.GatherFlattened([value], counts, root); break;
            case "GatherFlattened": world.GatherFlattened(array, root); break;
            case "Scatter": world.Scatter(perRank, root); break;
            case "ScatterFromFlattened": world.ScatterFromFlattened(perRank, counts, root); break;
            case "Reduce value": world.Reduce(value, Operation<int>.Add, root); break;
            case "Reduce array": world.Reduce(array, Operation<int>.Add, root); break;
            default: throw new ArgumentOutOfRangeException(nameof(collective), collective, null);
        }
    }

    private static void AssertCause(MpiException error, int rank, ErrorClass errorClass, params string[] fragments)
    {
        Assert.Contains($"Rank {rank} failed", error.Message);
        var cause = Assert.IsType<MpiException>(error.InnerException);
        Assert.Equal(errorClass, cause.ErrorClass);
        foreach (var fragment in fragments) Assert.Contains(fragment, cause.Message);
    }
}
