namespace Pmpi.Tests.Hosting;

/// <summary>
/// The constructor form run directly (not launched by an agent): MPI's singleton init, nested initialization, and
/// finalization. Each test runs on a thread of its own, since initialization belongs to the thread that did it.
/// </summary>
public class EnvironmentTests
{
    [Fact]
    public void Constructor_RunDirectly_MakesWorldOfOne()
    {
        OnOwnThread(() =>
        {
            string[] args = ["input.txt"];
            using (new Pmpi.Environment(ref args))
            {
                Assert.True(Pmpi.Environment.Initialized);
                Assert.Equal((0, 1), (Communicator.world.Rank, Communicator.world.Size));
                Assert.Same(Communicator.World, Communicator.world);
                Assert.True(Pmpi.Environment.IsMainThread);
                Assert.Equal(["input.txt"], args);
            }
        });
    }

    [Fact]
    public void Constructor_Nested_JoinsTheWorldAndOnlyTheOuterFinalizes()
    {
        OnOwnThread(() =>
        {
            string[] args = [];
            using (new Pmpi.Environment(ref args))
            {
                var world = Communicator.World;
                using (new Pmpi.Environment(ref args)) Assert.Same(world, Communicator.World);
                Assert.True(Pmpi.Environment.Initialized);
                Intracommunicator? ran = null;
                Pmpi.Environment.Run(ref args, inner => ran = inner);
                Assert.Same(world, ran);
                world.Send(5, 0, 1); // still usable after the inner Dispose and Run
                Assert.Equal(5, world.Receive<int>(0, 1));
            }
            Assert.False(Pmpi.Environment.Initialized);
            Assert.True(Pmpi.Environment.Finalized);
        });
    }

    [Fact]
    public void Constructor_AfterFinalize_ThrowsAndWorldSaysFinalized()
    {
        OnOwnThread(() =>
        {
            string[] args = [];
            new Pmpi.Environment(ref args).Dispose();
            var again = Assert.Throws<ObjectDisposedException>(() => new Pmpi.Environment(ref args));
            Assert.Contains("already finalized", again.Message);
            var error = Assert.Throws<MpiException>(() => Communicator.World);
            Assert.Contains("finalized", error.Message);
        });
    }

    /// <summary>MPI.NET's EnvironmentDisposalThrowsTest: Run, which finalizes, then Run again, which must throw InvalidOperationException.</summary>
    [Fact]
    public void Run_AgainAfterARunThatFinalized_ThrowsInvalidOperationException()
    {
        OnOwnThread(() =>
        {
            string[] args = [];
            int ranks = 0;
            Pmpi.Environment.Run(ref args, comm => ranks += comm.Size, true);

            var again = Assert.ThrowsAny<InvalidOperationException>(() => Pmpi.Environment.Run(ref args, comm => ranks += comm.Size, true));

            Assert.Contains("already finalized", again.Message);
            Assert.Equal(1, ranks);
        });
    }

    [Fact]
    public void Constructor_AskedForSeveralRanks_ThrowsNamingTheWaysToGetThem()
    {
        OnOwnThread(() =>
        {
            string[] args = ["--pmpi-ranks", "4"];
            var error = Assert.Throws<MpiException>(() => new Pmpi.Environment(ref args));
            Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
            Assert.Contains("pmpi run -n 4", error.Message);
            Assert.Contains("Environment.Run", error.Message);
            Assert.False(Pmpi.Environment.Initialized);
        });
    }

    [Fact]
    public void IsMainThread_OtherThreadOfTheRank_IsFalse()
    {
        OnOwnThread(() =>
        {
            string[] args = [];
            using (new Pmpi.Environment(ref args))
            {
                bool? onOther = null;
                var other = new Thread(() => onOther = Pmpi.Environment.IsMainThread);
                other.Start();
                Assert.True(other.Join(TestJob.Timeout));
                Assert.False(onOther);
            }
        });
    }

    [Fact]
    public void Run_InsideRank_RunsOnThatWorldInsteadOfASecondOne()
    {
        var sizes = TestJob.RunInProcess(3, world =>
        {
            int size = 0;
            Pmpi.Environment.Run(inner => size = ReferenceEquals(inner, world) ? inner.Size : -1);
            return size;
        });
        Assert.Equal([3, 3, 3], sizes);
    }

    [Fact]
    public void LocalRank_RanksThatAreThreads_ShareOneNodeInRankOrder()
    {
        var places = TestJob.RunInProcess(3, _ => (Pmpi.Environment.LocalRank, Pmpi.Environment.LocalSize, Pmpi.Environment.NodeRank));

        Assert.Equal([(0, 3, 0), (1, 3, 0), (2, 3, 0)], places);
    }

    [Fact]
    public void LocalRank_RunDirectly_IsTheOnlyRankOfItsNode()
    {
        OnOwnThread(() =>
        {
            string[] args = [];
            using (new Pmpi.Environment(ref args))
                Assert.Equal((0, 1, 0), (Pmpi.Environment.LocalRank, Pmpi.Environment.LocalSize, Pmpi.Environment.NodeRank));
        });
    }

    private static void OnOwnThread(Action body)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        thread.Start();
        Assert.True(thread.Join(TestJob.Timeout), "The test's thread did not finish in time.");
        if (failure is not null) System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
    }
}
