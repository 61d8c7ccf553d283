namespace Pmpi.Tests.Transport;

/// <summary>Ranks route their links from the rank table before any message moves, and refuse a table they cannot route.</summary>
public sealed class RoutingTests
{
    [Fact]
    public void Start_PeerInAnotherDomainWithoutGateways_FailsNamingBothRanksAndDomainsBeforeAnySend()
    {
        using var job = new LoopbackGrpcJob(2, domains: ["campus-a", "campus-b"]);
        int bodiesRun = 0;

        var error = Assert.Throws<MpiException>(() => Pmpi.Environment.Run(job, _ => Interlocked.Increment(ref bodiesRun), new EnvironmentOptions { Timeout = TestJob.Timeout }));

        Assert.Equal(0, bodiesRun);
        Assert.Matches(@"Rank (0 \(domain 'campus-a'\) cannot reach rank 1 \(domain 'campus-b'\)|1 \(domain 'campus-b'\) cannot reach rank 0 \(domain 'campus-a'\))", error.Message);
        Assert.Contains("has no gateway", error.Message);
        // The failing rank told the master, as a launched rank does.
        Assert.NotNull(job.Aborted);
        Assert.Contains("cannot reach rank", job.Aborted.Message);
    }
}
