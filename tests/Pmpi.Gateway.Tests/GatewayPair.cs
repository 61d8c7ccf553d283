using System.Net;
using Google.Protobuf;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// Two real gateways on loopback, domains "a" and "b", speaking mutual TLS under one throwaway cluster credential,
/// and a real rank endpoint of domain b (h2c on loopback, as a rank's is) that answers each frame of a stream it
/// accepts with the same frame, after checking that the Hello names it.
/// </summary>
internal sealed class GatewayPair : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>The echo endpoint's world rank in <see cref="Job"/>.</summary>
    public const int EchoRank = 1;

    private readonly string _directory;

    private GatewayPair(string directory, ClusterCredentials credentials, GatewayHost a, GatewayHost b, RpcServer echo)
    {
        _directory = directory;
        Credentials = credentials;
        A = a;
        B = b;
        Echo = echo;
    }

    public ClusterCredentials Credentials { get; }

    public RpcSecurity Member => RpcSecurity.MutualTls(Credentials);

    public GatewayHost A { get; }

    public GatewayHost B { get; private set; }

    public RpcServer Echo { get; }

    /// <param name="streamIdleTimeout">Both gateways' <see cref="GatewayOptions.StreamIdleTimeout"/>; their default when null.</param>
    /// <param name="maxJobs">Both gateways' <see cref="GatewayOptions.MaxJobs"/>; their default when null.</param>
    /// <param name="bDialsOut">Whether gateway b dials out to gateway a (<see cref="GatewayOptions.DialOut"/>) rather than being dialed.</param>
    public static async Task<GatewayPair> StartAsync(TimeSpan? streamIdleTimeout = null, int? maxJobs = null, bool bDialsOut = false)
    {
        var directory = Directory.CreateTempSubdirectory("pmpi-gateway-tests-").FullName;
        var credentials = ClusterCredentials.Initialize(Path.Combine(directory, "cluster"), []);
        var security = RpcSecurity.MutualTls(credentials);
        var a = await GatewayHost.StartAsync(options => Configure(options, "a", security, streamIdleTimeout, maxJobs)).WaitAsync(Timeout);
        var b = await GatewayHost.StartAsync(options =>
        {
            Configure(options, "b", security, streamIdleTimeout, maxJobs);
            if (bDialsOut) options.DialOut.Add(a.Address.Authority);
        }).WaitAsync(Timeout);
        var echo = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
            endpoints.MapGrpcDuplexStreaming<Frame, Frame>(ServicePaths.Connect, async (requests, responses, call) =>
            {
                var hello = (await requests.ReadAsync(call.CancellationToken))?.Hello ?? throw new RpcException(StatusCode.InvalidArgument, "no Hello");
                if (hello.DestinationWorldRank != EchoRank) throw new RpcException(StatusCode.NotFound, $"this is rank {EchoRank}, not {hello.DestinationWorldRank}");
                while (await requests.ReadAsync(call.CancellationToken) is { } frame) await responses.WriteAsync(frame, call.CancellationToken);
            })).WaitAsync(Timeout);
        return new GatewayPair(directory, credentials, a, b, echo);
    }

    private static void Configure(GatewayOptions options, string domain, RpcSecurity security, TimeSpan? streamIdleTimeout, int? maxJobs)
    {
        if (streamIdleTimeout is { } idle) options.StreamIdleTimeout = idle;
        if (maxJobs is { } jobs) options.MaxJobs = jobs;
        options.Domain = domain;
        options.BindAddress = "127.0.0.1";
        options.Port = 0;
        options.Security = security;
    }

    /// <summary>
    /// A job of three ranks: rank 0 in domain a, rank 1 (the echo endpoint) in domain b, rank 2 in domain c, whose
    /// gateway is <paramref name="gatewayC"/>; the ticket signed with the cluster key, naming <paramref name="agentB"/>
    /// (host:port) as rank 1's agent when given.
    /// </summary>
    public (RegisterJobRequest Request, string Token) Job(string jobId, string gatewayC = "https://127.0.0.1:1", string? agentB = null)
    {
        var issued = JobTickets.Create(jobId, 3);
        if (agentB is not null) issued.Agents.Add(new AgentRanks { Agent = agentB, Ranks = { 1 } });
        var (ticket, signature) = JobTickets.Sign(Member, issued);
        var table = new RankTable
        {
            Ranks =
            {
                new RankEntry { Rank = 0, Domain = "a", Node = "a1", Gateway = Trim(A.Address), Endpoint = "http://127.0.0.1:1" },
                new RankEntry { Rank = 1, Domain = "b", Node = "b1", Gateway = Trim(B.Address), Endpoint = Trim(Echo.Address) },
                new RankEntry { Rank = 2, Domain = "c", Node = "c1", Gateway = gatewayC, Endpoint = "http://127.0.0.1:1" },
            },
        };
        return (new RegisterJobRequest { Ticket = ticket, TicketSignature = signature, Table = table }, JobTickets.JobToken(Member, issued));
    }

    /// <summary>Registers <paramref name="request"/> with both gateways, as the master does.</summary>
    public async Task RegisterAsync(RegisterJobRequest request)
    {
        foreach (var gateway in new[] { A, B })
        {
            using var channel = new RpcChannel(gateway.Address, security: Member);
            await channel.UnaryAsync<RegisterJobRequest, RegisterJobReply>(ServicePaths.RegisterJob, request).WaitAsync(Timeout);
        }
    }

    public async Task<GatewayStatus> StatusAsync(GatewayHost gateway)
    {
        using var channel = new RpcChannel(gateway.Address, security: Member);
        return await channel.UnaryAsync<GetStatusRequest, GatewayStatus>(ServicePaths.GatewayStatus, new GetStatusRequest()).WaitAsync(Timeout);
    }

    /// <summary>A rank's channel to gateway a: TLS trusting the cluster CA, no client certificate (ranks hold none).</summary>
    public RpcChannel RankChannel(GatewayHost gateway) => new(gateway.Address, security: RpcSecurity.TrustingAuthority(Credentials.Authority));

    /// <summary>
    /// Rank 0 of job <paramref name="jobId"/> streams three 1 MB frames through gateway a to the echo rank (rank 1, of
    /// domain b) and checks that they all come back, in order, before the call ends.
    /// </summary>
    public async Task EchoFromRankZeroAsync(string jobId, string token)
    {
        using var channel = RankChannel(A);
        await using var call = await channel.StartAsync<Frame, Frame>(ServicePaths.Connect, RouteProof.Headers(token, jobId, 0, EchoRank)).WaitAsync(Timeout);
        await call.Requests.WriteAsync(new Frame { Hello = new Hello { JobId = jobId, JobToken = token, SourceWorldRank = 0, DestinationWorldRank = EchoRank } }, default).AsTask().WaitAsync(Timeout);
        var sent = Enumerable.Range(1, 3).Select(sequence => Data(sequence, 1 << 20)).ToList();
        foreach (var frame in sent) await call.Requests.WriteAsync(frame, default).AsTask().WaitAsync(Timeout);
        var received = new List<Frame>();
        for (int i = 0; i < sent.Count; i++) received.Add((await call.Responses.ReadAsync(default).AsTask().WaitAsync(Timeout))!);
        await call.CompleteRequestsAsync().WaitAsync(Timeout);
        Assert.Null(await call.Responses.ReadAsync(default).AsTask().WaitAsync(Timeout));
        Assert.Equal(sent, received);
    }

    /// <summary>Stops gateway b (its hop then fails).</summary>
    public async Task StopBAsync() => await B.DisposeAsync();

    public static string Trim(Uri address) => address.GetLeftPart(UriPartial.Authority);

    public static Frame Data(int sequence, int length) => new()
    {
        Data = new Data { Sequence = (ulong)sequence, TotalLength = length, Payload = ByteString.CopyFrom(Enumerable.Range(0, length).Select(i => (byte)(i * 7 + sequence)).ToArray()) },
    };

    public async ValueTask DisposeAsync()
    {
        await A.DisposeAsync();
        await B.DisposeAsync();
        await Echo.DisposeAsync();
        Directory.Delete(_directory, recursive: true);
    }
}
