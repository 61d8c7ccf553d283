namespace Pmpi.Tests.PointToPoint;

public class ErrorTests
{
    [Fact]
    public void Receive_BufferTooSmall_ThrowsTruncateNamingSizes()
    {
        TestJob.Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new int[10], 1, 4);
            else
            {
                var buffer = new int[3];
                var error = Assert.Throws<MpiException>(() => world.Receive(0, 4, ref buffer));
                Assert.Equal(ErrorClass.Truncate, error.ErrorClass);
                Assert.Contains("10", error.Message);
                Assert.Contains("3", error.Message);
                Assert.Contains("tag 4", error.Message);
            }
        });
    }

    [Fact]
    public void Receive_OtherType_ThrowsTypeMismatchNamingBoth()
    {
        TestJob.Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new[] { 1, 2 }, 1, 0);
            else
            {
                var error = Assert.Throws<MpiException>(() => world.Receive<double[]>(0, 0));
                Assert.Equal(ErrorClass.TypeMismatch, error.ErrorClass);
                Assert.Contains("Double[]", error.Message);
                Assert.Contains("Int32[]", error.Message);
                Assert.Contains("rank 0", error.Message);
            }
        });
    }

    [Fact]
    public void Receive_StructOfOtherType_ThrowsTypeMismatch()
    {
        TestJob.Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new Particle(1, 2, 3), 1, 0);
            else Assert.Equal(ErrorClass.TypeMismatch, Assert.Throws<MpiException>(() => world.Receive<(double, double, int)>(0, 0)).ErrorClass);
        });
    }

    [Theory]
    [InlineData(2)]
    [InlineData(-3)]
    [InlineData(Communicator.AnySource)]
    public void Send_InvalidDestination_ThrowsInvalidRankWithValue(int dest)
    {
        TestJob.Run(2, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(1, dest, 0));
            Assert.Equal(ErrorClass.InvalidRank, error.ErrorClass);
            Assert.Contains(dest.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message);
        });
    }

    [Theory]
    [InlineData(-5)]
    [InlineData(Communicator.AnyTag)]
    public void Send_InvalidTag_ThrowsInvalidTag(int tag)
    {
        TestJob.Run(1, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(1, 0, tag));
            Assert.Equal(ErrorClass.InvalidTag, error.ErrorClass);
            Assert.Contains(tag.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message);
        });
    }

    [Fact]
    public void Receive_InvalidSourceOrTag_Throws()
    {
        TestJob.Run(2, world =>
        {
            Assert.Equal(ErrorClass.InvalidRank, Assert.Throws<MpiException>(() => world.Receive<int>(5, 0)).ErrorClass);
            Assert.Equal(ErrorClass.InvalidTag, Assert.Throws<MpiException>(() => world.Receive<int>(0, -7)).ErrorClass);
        });
    }

    [Fact]
    public void Send_OnDisposedCommunicator_ThrowsInvalidCommunicator()
    {
        TestJob.Run(2, world =>
        {
            var dup = world.Dup();
            dup.Dispose();
            Assert.Equal(ErrorClass.InvalidCommunicator, Assert.Throws<MpiException>(() => dup.Send(1, 0, 0)).ErrorClass);
        });
    }

    [Fact]
    public void Abort_OnOneRank_WakesBlockedRanksAndReportsCode()
    {
        var error = Assert.Throws<MpiException>(() => TestJob.Run(3, world =>
        {
            if (world.Rank == 2) world.Abort(3);
            else world.Receive<int>(2, 0);
        }));
        Assert.Equal(ErrorClass.Aborted, error.ErrorClass);
        Assert.Equal(3, error.AbortCode);
        Assert.Contains("Rank 2", error.Message);
    }

    [Fact]
    public void Run_RankThrows_AbortsJobNamingRank()
    {
        var error = Assert.Throws<MpiException>(() => TestJob.Run(4, world =>
        {
            if (world.Rank == 1) throw new InvalidOperationException("boom");
            world.Barrier();
        }));
        Assert.Equal(ErrorClass.Aborted, error.ErrorClass);
        Assert.Contains("Rank 1 failed: boom", error.Message);
        Assert.IsType<InvalidOperationException>(error.InnerException);
    }

    [Fact]
    public void Run_Deadlock_TimesOut()
    {
        var error = Assert.Throws<TimeoutException>(() => Pmpi.Environment.Run(2, world => world.Receive<int>(1 - world.Rank, 0),
            new EnvironmentOptions { Timeout = TimeSpan.FromSeconds(1) }));
        Assert.Contains("did not finish", error.Message);
    }

    [Fact]
    public void World_OutsideRank_ThrowsNotInitialised()
    {
        var error = Assert.Throws<MpiException>(() => Communicator.World);
        Assert.Contains("not initialised", error.Message);
    }
}
