using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Security;

/// <summary>
/// A rank endpoint's TLS on its real listener (<see cref="GrpcStreamListener"/>): a peer presenting a certificate pinned in the rank table is
/// served; a caller with no certificate, a stranger's or even a cluster member's is refused in the
/// handshake, before the server sends any HTTP/2 SETTINGS (so before it grants any window); a peer that dials
/// before the table is known waits for it.
/// </summary>
public sealed class RankEndpointSecurityTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly TaskCompletionSource<Func<string, bool>> _peerPins = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string _credentialsRoot = Directory.CreateTempSubdirectory("pmpi-rank-endpoint-tests-").FullName;
    private ClusterCredentials _cluster = null!;
    private GrpcStreamListener _listener = null!;
    private byte[] _serverPin = [];
    private int _served;

    public Task InitializeAsync()
    {
        _cluster = ClusterCredentials.Initialize(Path.Combine(_credentialsRoot, "cluster"), []);
        var security = RpcSecurity.RankEndpoint(_peerPins.Task, out _serverPin);
        // Every admitted call is answered with one NodeInfo, written off the connection's thread (which must not block).
        _listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, (call, hello) =>
        {
            Interlocked.Increment(ref _served);
            _ = Task.Run(() => call.Write(new NodeInfo { NodeName = "rank" }));
            return new Answer();
        }, security);
        return Task.CompletedTask;
    }

    public Task DisposeAsync()
    {
        _peerPins.TrySetCanceled();
        _listener.Dispose();
        Directory.Delete(_credentialsRoot, recursive: true);
        return Task.CompletedTask;
    }

    [Fact]
    public async Task Call_FromAPeerInTheTable_Served()
    {
        var peer = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out var peerPin);
        _peerPins.SetResult(new HashSet<string> { Convert.ToHexString(peerPin) }.Contains);

        var info = await CallAsync(peer.DialingPinned(_serverPin));

        Assert.Equal("rank", info.NodeName);
    }

    [Fact]
    public async Task Call_FromAClusterMembersCertificate_RefusedUnserved()
    {
        // A gateway relays the peers' own TLS, so even this cluster's certificate opens no stream of its own.
        _peerPins.SetResult(_ => false);

        var error = await Assert.ThrowsAsync<RpcException>(() => CallAsync(RpcSecurity.MutualTls(_cluster).DialingPinned(_serverPin)));

        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
        Assert.Equal(0, Volatile.Read(ref _served));
    }

    [Fact]
    public async Task Call_BeforeTheTableIsKnown_WaitsAndIsServedOnceItIs()
    {
        var peer = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out var peerPin);

        var call = CallAsync(peer.DialingPinned(_serverPin));
        await Task.Delay(500);
        Assert.False(call.IsCompleted);
        _peerPins.SetResult(new HashSet<string> { Convert.ToHexString(peerPin) }.Contains);

        Assert.Equal("rank", (await call).NodeName);
    }

    [Fact]
    public async Task Call_FromAStrangersCertificate_RefusedUnserved()
    {
        var peer = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out var peerPin);
        var stranger = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out _);
        var foreignCluster = RpcSecurity.MutualTls(ClusterCredentials.Initialize(Path.Combine(_credentialsRoot, "foreign"), []));
        _peerPins.SetResult(new HashSet<string> { Convert.ToHexString(peerPin) }.Contains);

        var strangerError = await Assert.ThrowsAsync<RpcException>(() => CallAsync(stranger.DialingPinned(_serverPin)));
        var foreignError = await Assert.ThrowsAsync<RpcException>(() => CallAsync(foreignCluster.DialingPinned(_serverPin)));

        Assert.Equal(StatusCode.Unavailable, strangerError.StatusCode);
        Assert.Equal(StatusCode.Unavailable, foreignError.StatusCode);
        Assert.Equal(0, Volatile.Read(ref _served));
    }

    [Fact]
    public async Task Connection_WithoutAClientCertificate_GetsNoHttp2Settings()
    {
        _peerPins.SetResult(_ => false);
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(_listener.Address.Host, _listener.Address.Port).WaitAsync(Timeout);
        await using var tls = new SslStream(tcp.GetStream());

        // A client that trusts any server and presents nothing: TLS 1.2 refuses in the handshake, TLS 1.3 right after it.
        var bytesFromServer = await ReadAfterHandshakeAsync(tls).WaitAsync(Timeout);

        Assert.Equal(0, bytesFromServer);
        Assert.Equal(0, Volatile.Read(ref _served));
    }

    /// <summary>Opens a call with <paramref name="client"/>'s TLS and returns the endpoint's answer, or throws why there is none.</summary>
    private async Task<NodeInfo> CallAsync(RpcSecurity client)
    {
        using var call = await GrpcStream.DialAsync(_listener.Address, ServicePaths.Connect, client).WaitAsync(Timeout);
        var answer = new Answer();
        call.Write(new Frame { Hello = new Hello { JobId = "job" } });
        call.Start(answer);
        return await answer.First.WaitAsync(Timeout);
    }

    /// <summary>The first message of a call, parsed as a NodeInfo; fails with the call's error if it ends first.</summary>
    private sealed class Answer : IGrpcStreamReceiver
    {
        private readonly TaskCompletionSource<NodeInfo> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<NodeInfo> First => _first.Task;

        public void OnMessage(ReadOnlySequence<byte> message) => _first.TrySetResult(NodeInfo.Parser.ParseFrom(message));

        public void OnEnd(RpcException? error) => _first.TrySetException(error ?? new RpcException(new Status(StatusCode.OK, "The call ended without an answer.")));
    }

    /// <summary>Completes a handshake presenting no certificate and sends HTTP/2's preface; returns how many bytes the server answered with.</summary>
    private static async Task<int> ReadAfterHandshakeAsync(SslStream tls)
    {
        try
        {
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ApplicationProtocols = [SslApplicationProtocol.Http2],
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            });
            // The client preface and an empty SETTINGS frame (RFC 9113 §3.4): a served connection answers with SETTINGS.
            await tls.WriteAsync("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray().Concat(new byte[] { 0, 0, 0, 4, 0, 0, 0, 0, 0 }).ToArray());
            var buffer = new byte[64];
            return await tls.ReadAsync(buffer);
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException)
        {
            return 0;
        }
    }
}
