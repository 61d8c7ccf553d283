using Google.Protobuf;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests.Security;

/// <summary>
/// One `pmpi agent` (mutual TLS under the tests' cluster) attacked by the tests of the security suite, a scratch
/// directory for their markers, and a second, foreign cluster whose credential must get nowhere.
/// </summary>
public sealed class SecurityFixture : IAsyncLifetime
{
    private readonly ScratchDirectory _scratch = new();

    internal AgentProcess Agent { get; private set; } = null!;

    /// <summary>A credential of another cluster: its own CA and its own ticket key.</summary>
    internal ClusterCredentials Foreign { get; private set; } = null!;

    /// <summary>Where <see cref="Foreign"/> lives, for `--credentials`.</summary>
    internal string ForeignDirectory => System.IO.Path.Combine(_scratch.Path, "foreign");

    /// <summary>A caller that checks the agent's certificate but presents none: a peer without the credential.</summary>
    internal static RpcSecurity NoCredential => RpcSecurity.TrustingAuthority(TestCluster.Credentials.Authority);

    public async Task InitializeAsync()
    {
        Foreign = ClusterCredentials.Initialize(ForeignDirectory, []);
        Agent = await AgentProcess.StartAsync("secured", slots: 4);
    }

    public async Task DisposeAsync()
    {
        await Agent.DisposeAsync();
        _scratch.Dispose();
    }

    /// <summary>A path in the scratch directory that a rank program writes if it ever runs.</summary>
    internal string NewMarker() => System.IO.Path.Combine(_scratch.Path, $"marker-{Guid.NewGuid():N}");

    /// <summary>A launch of one TestRanks rank writing <paramref name="marker"/>, under a ticket shaped by <paramref name="shape"/> and signed by <paramref name="signer"/>.</summary>
    internal LaunchRequest MarkerLaunch(string jobId, string marker, RpcSecurity signer, Action<JobTicket>? shape = null)
    {
        var ticket = JobTickets.Create(jobId, worldSize: 1);
        ticket.Agents.Add(new AgentRanks { Agent = Agent.Endpoint, Ranks = { 0 } });
        shape?.Invoke(ticket);
        var (bytes, signature) = JobTickets.Sign(signer, ticket);
        var request = new LaunchRequest { JobId = jobId, WorldSize = 1, MasterAddress = "http://127.0.0.1:1", Ticket = bytes, TicketSignature = signature };
        request.Ranks.Add(new RankLaunch { Rank = 0, Program = PmpiCli.TestRanksDll, Arguments = { "marker", marker }, WorkingDirectory = _scratch.Path });
        return request;
    }

    /// <summary>The same request with one byte of its ticket flipped after signing.</summary>
    internal static LaunchRequest Altered(LaunchRequest request)
    {
        var bytes = request.Ticket.ToByteArray();
        // The last byte belongs to the nonce, so the ticket still parses: only the signature can tell.
        bytes[^1] ^= 0x01;
        var altered = request.Clone();
        altered.Ticket = ByteString.CopyFrom(bytes);
        return altered;
    }
}
