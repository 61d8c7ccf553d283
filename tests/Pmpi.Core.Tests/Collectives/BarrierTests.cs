namespace Pmpi.Tests.Collectives;

public abstract class BarrierTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Barrier_EveryRankIncrementsBefore_EveryRankSeesAllArrivalsAfter(int size)
    {
        // Arrange
        int arrived = 0;

        // Act
        var seen = Run(size, world =>
        {
            Interlocked.Increment(ref arrived);
            world.Barrier();
            return Volatile.Read(ref arrived);
        });

        // Assert
        Assert.All(seen, count => Assert.Equal(size, count));
    }

    [Theory]
    [MemberData(nameof(TestJob.Sizes), MemberType = typeof(TestJob))]
    public void Barrier_ALateRankInEachPhase_NoRankPassesBeforeIt(int size)
    {
        // Arrange: in phase p rank p % size arrives late, so a barrier that does not wait lets others see too few.
        const int phases = 4;
        var arrived = new int[phases];

        // Act
        var seen = Run(size, world =>
        {
            var counts = new int[phases];
            for (int phase = 0; phase < phases; phase++)
            {
                if (world.Rank == phase % size) Thread.Sleep(20);
                Interlocked.Increment(ref arrived[phase]);
                world.Barrier();
                counts[phase] = Volatile.Read(ref arrived[phase]);
            }
            return counts;
        });

        // Assert
        Assert.All(seen, counts => Assert.All(counts, count => Assert.Equal(size, count)));
    }
}
