using Grpc.Core;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Hosting;
using Pmpi.Agent.Master;
using Pmpi.Agent.Staging;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using static Pmpi.Agent.Tests.Computation.JobText;

namespace Pmpi.Agent.Tests.Master;

/// <summary>The rank table the master answers registrations with: the placement's places plus the ranks' endpoints.</summary>
public class JobRunRegistrationTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private const string TwoDomains = """
        <computation name="c" xmlns="urn:pmpi:computation:v1">
          <domain name="campus-a" gateway="gw-a:7400"/>
          <domain name="campus-b" gateway="gw-b:7400" reachable="campus-a"/>
          <node name="a1" agent="a:1" domain="campus-a"/>
          <node name="b1" agent="b:1" domain="campus-b"/>
          <ranks program="p.dll" count="2"/>
        </computation>
        """;

    /// <summary>Two domains whose ranks reach each other directly: no gateway is on any route.</summary>
    private const string TwoReachableDomains = """
        <computation name="c" xmlns="urn:pmpi:computation:v1">
          <domain name="campus-a" gateway="gw-a:7400" reachable="campus-b"/>
          <domain name="campus-b" gateway="gw-b:7400" reachable="campus-a"/>
          <node name="a1" agent="a:1" domain="campus-a"/>
          <node name="b1" agent="b:1" domain="campus-b"/>
          <ranks program="p.dll" count="2"/>
        </computation>
        """;

    [Fact]
    public async Task RegisterAsync_EveryRankRegistered_AnswersTheLayoutWithEachEndpoint()
    {
        // Arrange
        var computation = Parse(TwoReachableDomains);
        var job = NewJob(computation);
        var layout = RankTableLayout.Build(computation, Placement.Assign(computation));

        // Act
        var tables = await Task.WhenAll(
            job.RegisterAsync(Request(job, 0, "campus-a"), CancellationToken.None),
            job.RegisterAsync(Request(job, 1, ""), CancellationToken.None)).WaitAsync(Timeout);

        // Assert
        Assert.Equal(tables[0], tables[1]);
        var table = tables[0];
        Assert.Equal(layout.Reach, table.Reach);
        for (int rank = 0; rank < 2; rank++)
        {
            var expected = layout.Ranks[rank].Clone();
            expected.Endpoint = $"http://127.0.0.1:{5000 + rank}/";
            Assert.Equal(expected, table.Ranks[rank]);
        }
        Assert.Equal("http://gw-b:7400", table.Ranks[1].Gateway);
    }

    [Fact]
    public async Task RegisterAsync_GatewayOnARouteUnreachable_FailsTheJobNamingItsDomainAndAddress()
    {
        // Arrange: a's ranks reach b's only through the gateways, and nothing listens at a's (loopback port 1).
        var job = NewJob(Parse("""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <domain name="campus-a" gateway="127.0.0.1:1"/>
              <domain name="campus-b" gateway="127.0.0.1:1" reachable="campus-a"/>
              <node name="a1" agent="a:1" domain="campus-a"/>
              <node name="b1" agent="b:1" domain="campus-b"/>
              <ranks program="p.dll" count="2"/>
            </computation>
            """));

        // Act: the table is complete, but the gateways must learn the endpoints before the ranks get it.
        var registrations = new[] { job.RegisterAsync(Request(job, 0, "campus-a"), CancellationToken.None), job.RegisterAsync(Request(job, 1, ""), CancellationToken.None) };
        var error = await Assert.ThrowsAsync<RpcException>(() => Task.WhenAll(registrations)).WaitAsync(Timeout);

        // Assert
        Assert.Equal(StatusCode.Aborted, error.StatusCode);
        Assert.Contains("the gateway of domain 'campus-a' at http://127.0.0.1:1 did not register the job", error.Status.Detail);
    }

    [Fact]
    public async Task RegisterAsync_AgentOfAnotherDomain_IsRefusedAndFailsTheJobNamingNodeAndBothDomains()
    {
        // Arrange
        var job = NewJob(Parse(TwoDomains));
        var waiting = job.RegisterAsync(Request(job, 0, "campus-a"), CancellationToken.None);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => job.RegisterAsync(Request(job, 1, "campus-a"), CancellationToken.None)).WaitAsync(Timeout);

        // Assert
        Assert.Equal(StatusCode.FailedPrecondition, error.StatusCode);
        Assert.Contains("node 'b1', whose agent serves domain 'campus-a', but the computation places that node in domain 'campus-b'", error.Status.Detail);
        // The rank already waiting for the table learns the job is over.
        var aborted = await Assert.ThrowsAsync<RpcException>(() => waiting).WaitAsync(Timeout);
        Assert.Equal(StatusCode.Aborted, aborted.StatusCode);
        Assert.Contains("whose agent serves domain 'campus-a'", aborted.Status.Detail);
    }

    private static JobRun NewJob(ComputationDefinition computation)
    {
        var defaults = new AgentOptions();
        var nothingStaged = StagedPrograms.Check(computation, [], new ProgramCache(defaults.StagingDirectory, defaults.KeepStaged, defaults.StagingLimit));
        return new JobRun(computation, new Uri("http://127.0.0.1:1"), "", new Uri("http://127.0.0.1:2"), RpcSecurity.ForThisProcess(),
            defaults.HeartbeatTimeout, defaults.RegistrationTimeout, nothingStaged);
    }

    private static RegisterRequest Request(JobRun job, int rank, string domain) =>
        new() { JobId = job.Id, JobToken = job.Token, Rank = rank, Endpoint = $"http://127.0.0.1:{5000 + rank}/", Domain = domain };
}
