using Google.Protobuf;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Security;

/// <summary>Job tickets (HMAC-SHA256 under the cluster key) and the job keys derived from them (HKDF-SHA256).</summary>
public sealed class JobTicketsTests
{
    private static readonly RpcSecurity Cluster = RpcSecurity.ForThisProcess();

    [Fact]
    public void TryVerify_SignedTicket_ReturnsIt()
    {
        var (ticket, signature) = JobTickets.Sign(Cluster, Ticket("job-1"));

        Assert.True(JobTickets.TryVerify(Cluster, ticket, signature, out var verified, out var failure), failure);
        Assert.Equal("job-1", verified.JobId);
    }

    [Fact]
    public void TryVerify_OneBitAltered_Refused()
    {
        var (ticket, signature) = JobTickets.Sign(Cluster, Ticket("job-1"));
        var bytes = ticket.ToByteArray();
        bytes[^1] ^= 1;

        Assert.False(JobTickets.TryVerify(Cluster, ByteString.CopyFrom(bytes), signature, out _, out var failure));
        Assert.Contains("not this cluster's", failure);
    }

    [Fact]
    public void TryVerify_SignedWithAnotherKey_Refused()
    {
        var (ticket, signature) = JobTickets.Sign(RpcSecurity.ForThisProcess(), Ticket("job-1"));

        Assert.False(JobTickets.TryVerify(Cluster, ticket, signature, out _, out var failure));
        Assert.Contains("not this cluster's", failure);
    }

    [Fact]
    public void TryVerify_Expired_RefusedNamingTheJob()
    {
        var expired = Ticket("job-1");
        expired.ExpiresUnixMs = DateTimeOffset.UtcNow.AddMilliseconds(-1).ToUnixTimeMilliseconds();
        var (ticket, signature) = JobTickets.Sign(Cluster, expired);

        Assert.False(JobTickets.TryVerify(Cluster, ticket, signature, out _, out var failure));
        Assert.Contains("job job-1 expired", failure);
    }

    [Fact]
    public void JobToken_SameJob_SameKeyOnEverySideAndInEverySpawnedWorld_OtherJobsAndClustersDiffer()
    {
        var ticket = Ticket("job-1");
        var sameJobAgain = Ticket("job-1");
        var spawned = JobTickets.CreateSpawned(ticket, worldFirst: 2, worldSize: 3);
        var otherJobSameNonce = ticket.Clone();
        otherJobSameNonce.JobId = "job-2";

        var token = JobTickets.JobToken(Cluster, ticket);

        Assert.Equal(token, JobTickets.JobToken(Cluster, JobTicket.Parser.ParseFrom(JobTickets.Sign(Cluster, ticket).Ticket)));
        Assert.Equal(token, JobTickets.JobToken(Cluster, spawned));
        Assert.Equal(32, Convert.FromBase64String(token).Length);
        Assert.NotEqual(token, JobTickets.JobToken(Cluster, sameJobAgain)); // a fresh nonce
        Assert.NotEqual(token, JobTickets.JobToken(Cluster, otherJobSameNonce));
        Assert.NotEqual(token, JobTickets.JobToken(RpcSecurity.ForThisProcess(), ticket));
        Assert.True(JobTickets.TokenMatches(token, token));
        Assert.False(JobTickets.TokenMatches(token, token[..^2] + "AA"));
    }

    private static JobTicket Ticket(string jobId)
    {
        var ticket = JobTickets.Create(jobId, worldSize: 2);
        ticket.Agents.Add(new AgentRanks { Agent = "127.0.0.1:7300", Ranks = { 0, 1 } });
        return ticket;
    }
}
