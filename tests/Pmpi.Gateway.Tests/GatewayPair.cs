using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

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
    /// <param name="configure">Sets more of both gateways' options.</param>
    public static async Task<GatewayPair> StartAsync(TimeSpan? streamIdleTimeout = null, int? maxJobs = null, bool bDialsOut = false, Action<GatewayOptions>? configure = null)
    {
        var directory = Directory.CreateTempSubdirectory("pmpi-gateway-tests-").FullName;
        var credentials = ClusterCredentials.Initialize(Path.Combine(directory, "cluster"), []);
        var security = RpcSecurity.MutualTls(credentials);
        var a = await GatewayHost.StartAsync(options =>
        {
            Configure(options, "a", security, streamIdleTimeout, maxJobs);
            configure?.Invoke(options);
        }).WaitAsync(Timeout);
        var b = await GatewayHost.StartAsync(options =>
        {
            Configure(options, "b", security, streamIdleTimeout, maxJobs);
            configure?.Invoke(options);
            if (bDialsOut) options.DialOut.Add(a.Address.Authority);
        }).WaitAsync(Timeout);
        var echo = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<EchoRankTransport>()).WaitAsync(Timeout);
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
    public (RegisterJobRequest Request, string Token) Job(string jobId, string gatewayC = "https://127.0.0.1:1", string? agentB = null, string? endpointB = null)
    {
        var issued = JobTickets.Create(jobId, 3);
        if (agentB is not null) issued.Agents.Add(new AgentRanks { Agent = agentB, Ranks = { 1 } });
        var (ticket, signature) = JobTickets.Sign(Member, issued);
        var table = new RankTable
        {
            Ranks =
            {
                new RankEntry { Rank = 0, Domain = "a", Node = "a1", Gateway = Trim(A.Address), Endpoint = "http://127.0.0.1:1" },
                new RankEntry { Rank = 1, Domain = "b", Node = "b1", Gateway = Trim(B.Address), Endpoint = endpointB ?? Trim(Echo.Address) },
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
            using var channel = RpcChannels.For(gateway.Address, Member);
            await new GatewayClient(channel).RegisterJobAsync(request).ResponseAsync.WaitAsync(Timeout);
        }
    }

    /// <summary>
    /// Registers job <paramref name="jobId"/> (<paramref name="request"/>) as its master in domain a does: with a's gateway, then with b's through
    /// a's, a control call that a relays.
    /// </summary>
    public async Task RegisterFromMasterInAAsync(string jobId, RegisterJobRequest request)
    {
        request.MasterDomain = "a";
        using (var own = RpcChannels.For(A.Address, Member))
            await new GatewayClient(own).RegisterJobAsync(request).ResponseAsync.WaitAsync(Timeout);
        using var throughA = RpcChannels.For(A.Address, Member, metadata: ControlRoute.ToGateway(jobId, "b"));
        await new GatewayClient(throughA).RegisterJobAsync(request).ResponseAsync.WaitAsync(Timeout);
    }

    public async Task<GatewayStatus> StatusAsync(GatewayHost gateway)
    {
        using var channel = RpcChannels.For(gateway.Address, Member);
        return await new GatewayClient(channel).GetStatusAsync(new GetStatusRequest()).ResponseAsync.WaitAsync(Timeout);
    }

    /// <summary>A channel to a gateway as a rank has one: TLS trusting the cluster CA, no client certificate (ranks hold none).</summary>
    public GrpcChannel RankChannel(GatewayHost gateway) => RpcChannels.For(gateway.Address, RpcSecurity.TrustingAuthority(Credentials.Authority));

    /// <summary>
    /// A rank's stream through <paramref name="gateway"/> (gateway a by default) to rank <paramref name="destination"/>
    /// of job <paramref name="jobId"/>, as a rank dials it: a TCP connection starting with the relay preamble, then
    /// HTTP/2 (h2c, as the echo endpoint speaks) end to end; the Hello is written.
    /// </summary>
    public async Task<RelayedCall> DialAsync(string jobId, string token, int source = 0, int destination = EchoRank, GatewayHost? gateway = null, string? endpoint = null)
    {
        var stream = await GrpcStream.DialThroughAsync((gateway ?? A).Address, RelayPreamble.For(token, jobId, source, destination),
            new Uri(endpoint ?? Trim(Echo.Address)), ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var call = new RelayedCall(stream);
        call.Write(new Frame { Hello = new Hello { JobId = jobId, JobToken = token, SourceWorldRank = source, DestinationWorldRank = destination } });
        stream.Start(call);
        return call;
    }

    /// <summary>
    /// Rank 0 of job <paramref name="jobId"/> streams three 1 MB frames through gateway a to the echo rank (rank 1, of
    /// domain b) and checks that they all come back, in order, before the call ends.
    /// </summary>
    public async Task EchoFromRankZeroAsync(string jobId, string token)
    {
        using var call = await DialAsync(jobId, token);
        var sent = Enumerable.Range(1, 3).Select(sequence => Data(sequence, 1 << 20)).ToList();
        foreach (var frame in sent) await Task.Run(() => call.Write(frame)).WaitAsync(Timeout);
        var received = new List<Frame>();
        for (int i = 0; i < sent.Count; i++) received.Add((await call.ReadAsync().WaitAsync(Timeout))!);
        call.Stream.Complete();
        Assert.Null(await call.ReadAsync().WaitAsync(Timeout));
        Assert.Equal(sent, received);
    }

    /// <summary>
    /// Opens a TCP connection to <paramref name="gateway"/>, writes <paramref name="preamble"/> and reads the gateway's
    /// reply: its status and reason, and the connection (relayed from now on when the status is OK).
    /// </summary>
    public static async Task<(StatusCode Code, string Reason, Socket Socket)> OpenRelayAsync(GatewayHost gateway, byte[] preamble)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, gateway.Address.Port).WaitAsync(Timeout);
        await socket.SendAsync(preamble).WaitAsync(Timeout);
        var (code, reason) = await ReadReplyAsync(socket);
        return (code, reason, socket);
    }

    /// <summary>A gateway's reply to a preamble on <paramref name="socket"/>.</summary>
    public static async Task<(StatusCode Code, string Reason)> ReadReplyAsync(Socket socket)
    {
        var reply = new byte[3 + RelayReply.MaxReasonLength];
        int read = 0, needed = 3;
        StatusCode code;
        string reason;
        while (!RelayReply.TryRead(reply.AsSpan(0, read), out code, out reason, out needed))
        {
            int received = await socket.ReceiveAsync(reply.AsMemory(read, needed - read)).AsTask().WaitAsync(Timeout);
            if (received == 0) throw new IOException($"The gateway closed the connection after {read} bytes of its reply.");
            read += received;
        }
        return (code, reason);
    }

    /// <summary>Stops gateway b (its hop then fails).</summary>
    public async Task StopBAsync() => await B.DisposeAsync();

    public static string Trim(Uri address) => address.GetLeftPart(UriPartial.Authority);

    public static Frame Data(int sequence, int length) => new()
    {
        Data = new Data { Sequence = (ulong)sequence, TotalLength = length, Payload = ByteString.CopyFrom(Enumerable.Range(0, length).Select(i => (byte)(i * 7 + sequence)).ToArray()) },
    };

    /// <summary>A TCP endpoint on loopback that sends back every byte it receives, and ends its side when the caller ends its own.</summary>
    public static Socket StartRawEcho()
    {
        var listener = new Socket(SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(16);
        _ = Task.Run(async () =>
        {
            while (true)
            {
                Socket accepted;
                try
                {
                    accepted = await listener.AcceptAsync();
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }
                _ = Task.Run(async () =>
                {
                    using var socket = accepted;
                    var buffer = new byte[256 * 1024];
                    try
                    {
                        int read;
                        while ((read = await socket.ReceiveAsync(buffer)) > 0) await socket.SendAsync(buffer.AsMemory(0, read));
                        socket.Shutdown(SocketShutdown.Send);
                    }
                    catch (SocketException)
                    {
                    }
                });
            }
        });
        return listener;
    }

    /// <summary>The echo endpoint: checks that the Hello names it, then sends back every frame.</summary>
    private sealed class EchoRankTransport : RankTransportBase
    {
        public override async Task Connect(IAsyncStreamReader<Frame> requests, IServerStreamWriter<Frame> responses, ServerCallContext context)
        {
            var hello = await requests.MoveNext(context.CancellationToken) ? requests.Current.Hello : null;
            if (hello is null) throw new RpcException(new Status(StatusCode.InvalidArgument, "no Hello"));
            if (hello.DestinationWorldRank != EchoRank) throw new RpcException(new Status(StatusCode.NotFound, $"this is rank {EchoRank}, not {hello.DestinationWorldRank}"));
            await foreach (var frame in requests.ReadAllAsync(context.CancellationToken)) await responses.WriteAsync(frame, context.CancellationToken);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await A.DisposeAsync();
        await B.DisposeAsync();
        await Echo.DisposeAsync();
        Directory.Delete(_directory, recursive: true);
    }
}

/// <summary>A rank stream dialed through the gateways (<see cref="GatewayPair.DialAsync"/>): frames written, and those received in order.</summary>
internal sealed class RelayedCall(GrpcStream stream) : IGrpcStreamReceiver, IDisposable
{
    private readonly Channel<Frame> _received = Channel.CreateUnbounded<Frame>();

    public GrpcStream Stream => stream;

    public void Write(Frame frame) => stream.Write(frame);

    /// <summary>The next frame, null once the call ended cleanly; throws the call's error when it failed.</summary>
    public async Task<Frame?> ReadAsync()
    {
        try
        {
            return await _received.Reader.ReadAsync();
        }
        catch (ChannelClosedException e) when (e.InnerException is null)
        {
            return null;
        }
        catch (ChannelClosedException e)
        {
            throw e.InnerException!;
        }
    }

    public void OnMessage(ReadOnlySequence<byte> message) => _received.Writer.TryWrite(Frame.Parser.ParseFrom(message));

    public void OnEnd(RpcException? error) => _received.Writer.TryComplete(error);

    public void Dispose() => stream.Dispose();
}
