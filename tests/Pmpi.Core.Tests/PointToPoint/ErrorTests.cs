namespace Pmpi.Tests.PointToPoint;

public abstract class ErrorTests(Device device) : DeviceSuite(device)
{
    [Fact]
    public void Receive_BufferTooSmall_ThrowsTruncateNamingSizes()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new int[10], 1, 4);
            else
            {
                var buffer = new int[3];
                var error = Assert.Throws<MessageTruncatedException>(() => world.Receive(0, 4, ref buffer));
                Assert.Equal(ErrorClass.Truncate, error.ErrorClass);
                Assert.StartsWith("Rank 1 receiving from rank 0 with tag 4: ", error.Message, StringComparison.Ordinal);
                Assert.Contains("10 Int32 elements", error.Message);
                Assert.Contains("a buffer of 3.", error.Message);
            }
        });
    }

    [Fact]
    public void Receive_OtherType_ThrowsTypeMismatchNamingBoth()
    {
        Run(2, world =>
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
        Run(2, world =>
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
        Run(2, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(1, dest, 0));
            Assert.Equal(ErrorClass.InvalidRank, error.ErrorClass);
            Assert.Equal($"Rank {dest} (argument 'dest') is not in this communicator of 2 ranks.", error.Message);
        });
    }

    [Theory]
    [InlineData(-5)]
    [InlineData(Communicator.AnyTag)]
    public void Send_InvalidTag_ThrowsInvalidTag(int tag)
    {
        Run(1, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(1, 0, tag));
            Assert.Equal(ErrorClass.InvalidTag, error.ErrorClass);
            Assert.StartsWith($"Tag {tag} is invalid: tags run from 0 to", error.Message, StringComparison.Ordinal);
        });
    }

    [Fact]
    public void Receive_InvalidSourceOrTag_Throws()
    {
        Run(2, world =>
        {
            Assert.Equal(ErrorClass.InvalidRank, Assert.Throws<MpiException>(() => world.Receive<int>(5, 0)).ErrorClass);
            Assert.Equal(ErrorClass.InvalidTag, Assert.Throws<MpiException>(() => world.Receive<int>(0, -7)).ErrorClass);
        });
    }

    [Fact]
    public void Send_OnDisposedCommunicator_ThrowsInvalidCommunicator()
    {
        Run(2, world =>
        {
            var dup = world.Dup();
            dup.Dispose();
            Assert.Equal(ErrorClass.InvalidCommunicator, Assert.Throws<MpiException>(() => dup.Send(1, 0, 0)).ErrorClass);
        });
    }

    [Fact]
    public void Abort_OnOneRank_WakesBlockedRanksAndReportsCode()
    {
        var error = Assert.Throws<MpiException>(() => Run(3, world =>
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
        var error = Assert.Throws<MpiException>(() => Run(4, world =>
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
        var error = Assert.Throws<TimeoutException>(() => Run(2, new EnvironmentOptions { Timeout = TimeSpan.FromSeconds(1) },
            world => world.Receive<int>(1 - world.Rank, 0)));
        Assert.Contains("did not finish", error.Message);
    }

    [Fact]
    public void World_OutsideRank_ThrowsNotInitialised()
    {
        var error = Assert.Throws<MpiException>(() => Communicator.World);
        Assert.Contains("not initialised", error.Message);
    }
}
