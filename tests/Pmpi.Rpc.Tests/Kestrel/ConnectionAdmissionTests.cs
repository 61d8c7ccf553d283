using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Kestrel;

/// <summary>
/// A daemon's listener (mutual TLS, as an agent's) sheds unauthenticated connections before it refuses an
/// authenticated client, closes those that stay unauthenticated, and logs refused TLS handshakes once per interval.
/// </summary>
public sealed class ConnectionAdmissionTests : IDisposable
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;

    /// <summary>Short, for the tests that wait it out.</summary>
    private static readonly TimeSpan AuthenticationTimeout = TimeSpan.FromSeconds(2);

    /// <summary>How much earlier than asked a timer may fire (its clock's granularity), far below what an early close would show.</summary>
    private static readonly TimeSpan TimerSlack = TimeSpan.FromMilliseconds(50);

    private readonly string _root = Directory.CreateTempSubdirectory("pmpi-admission-tests-").FullName;
    private readonly ClusterCredentials _cluster;
    private readonly RecordingLoggerProvider _log = new();

    public ConnectionAdmissionTests() => _cluster = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public async Task Connect_UnauthenticatedFloodFromOneAddress_AuthenticatedClientFromItStillAnswered()
    {
        // Arrange: the address's whole allowance held by connections that completed TLS without a certificate and
        // then sat idle, as a local user without the credential can.
        await using var server = await StartAsync(RpcSecurity.MutualTls(_cluster), new RpcServerLimits { MaxConnectionsPerAddress = 8 });
        var flood = new List<TlsConnection>();
        try
        {
            for (int i = 0; i < 8; i++) flood.Add(await TlsConnection.OpenAsync(server, certificate: null));

            // Act: a cluster member calls from the same address.
            var node = await CallAsync(server, RpcSecurity.MutualTls(_cluster));

            // Assert: answered; the flood's oldest connection made room, its newest is still open.
            Assert.Equal("admitted", node.NodeName);
            Assert.True(await flood[0].ClosedWithinAsync(TimeSpan.FromSeconds(5)), "The oldest unauthenticated connection was not closed to make room.");
            Assert.False(await flood[^1].ClosedWithinAsync(TimeSpan.FromMilliseconds(200)), "A newer unauthenticated connection was closed too.");
            Assert.Contains(_log.Lines, line => line.Event == "ConnectionShed");
        }
        finally
        {
            foreach (var connection in flood) connection.Dispose();
        }
    }

    [LinuxFact]
    public async Task Connect_ListenerFullOfUnauthenticatedConnections_MemberFromAnotherAddressAnswered()
    {
        // Arrange: the whole listener's allowance held by idle connections from 127.0.0.2 (Linux routes all of 127/8 to lo).
        await using var server = await StartAsync(RpcSecurity.MutualTls(_cluster), new RpcServerLimits { MaxConnections = 4 });
        var flood = new List<TlsConnection>();
        try
        {
            for (int i = 0; i < 4; i++) flood.Add(await TlsConnection.OpenAsync(server, certificate: null, from: IPAddress.Parse("127.0.0.2")));

            // Act
            var node = await CallAsync(server, RpcSecurity.MutualTls(_cluster));

            // Assert
            Assert.Equal("admitted", node.NodeName);
            Assert.True(await flood[0].ClosedWithinAsync(TimeSpan.FromSeconds(5)), "The listener's oldest unauthenticated connection was not closed to make room.");
        }
        finally
        {
            foreach (var connection in flood) connection.Dispose();
        }
    }

    [Fact]
    public async Task Connect_AddressFullOfAuthenticatedConnections_ExcessRefusedAndLogged()
    {
        // Arrange
        await using var server = await StartAsync(RpcSecurity.MutualTls(_cluster), new RpcServerLimits { MaxConnectionsPerAddress = 3 });
        var held = new List<TlsConnection>();
        try
        {
            for (int i = 0; i < 3; i++) held.Add(await TlsConnection.OpenAsync(server, _cluster.Certificate));

            // Act
            bool excessRefused = await TlsConnection.RefusedAsync(server, _cluster.Certificate);

            // Assert
            Assert.True(excessRefused, "A connection past the per-address limit of authenticated ones was admitted.");
            foreach (var connection in held) Assert.False(await connection.ClosedWithinAsync(TimeSpan.FromMilliseconds(100)), "An authenticated connection was closed.");
            Assert.Contains(_log.Lines, line => line.Event == "ConnectionRefused"
                && line.Message.Contains("127.0.0.1 holds 3 authenticated connections (RpcServerLimits.MaxConnectionsPerAddress)", StringComparison.Ordinal));
        }
        finally
        {
            foreach (var connection in held) connection.Dispose();
        }
    }

    [Fact]
    public async Task Connect_NoCertificateAndNoCall_ClosedAfterAuthenticationTimeoutWhileAMemberStays()
    {
        // Arrange: a timeout long enough for a member's handshake on a loaded machine.
        await using var server = await StartAsync(RpcSecurity.MutualTls(_cluster), new RpcServerLimits { AuthenticationTimeout = AuthenticationTimeout });
        var clock = Stopwatch.StartNew();
        using var stranger = await TlsConnection.OpenAsync(server, certificate: null);
        using var member = await TlsConnection.OpenAsync(server, _cluster.Certificate);

        // Act
        bool strangerClosed = await stranger.ClosedWithinAsync(AuthenticationTimeout + TimeSpan.FromSeconds(10));
        var strangerLasted = clock.Elapsed;
        bool memberClosed = await member.ClosedWithinAsync(TimeSpan.FromSeconds(1));

        // Assert
        Assert.True(strangerClosed, "An unauthenticated connection outlived the authentication timeout by 10 s.");
        // The clock started before the connection did, but the server's timer may fire a few milliseconds early.
        Assert.True(strangerLasted >= AuthenticationTimeout - TimerSlack, $"The unauthenticated connection was closed after {strangerLasted.TotalSeconds:F3} s, before its timeout of {AuthenticationTimeout.TotalSeconds:F3} s.");
        Assert.False(memberClosed, "A connection with a cluster certificate was closed by the authentication timeout.");
    }

    [Fact]
    public async Task Call_PassesItsCallerCheck_ItsConnectionOutlivesTheAuthenticationTimeout()
    {
        // Arrange: request signing (no certificates): only a call's signature authenticates its connection.
        var security = RpcSecurity.ForThisProcess();
        await using var server = await StartAsync(security, new RpcServerLimits { AuthenticationTimeout = AuthenticationTimeout }, answerAfter: 2 * AuthenticationTimeout);

        // Act: a call that outlasts the timeout on its connection.
        var node = await CallAsync(server, security);

        // Assert
        Assert.Equal("admitted", node.NodeName);
    }

    [Fact]
    public async Task Handshake_ForeignCertificateThreeTimes_OneLineNamingWhyThenACount()
    {
        // Arrange: a member of another cluster.
        var foreign = ClusterCredentials.Initialize(Path.Combine(_root, "foreign"), []);
        var server = await StartAsync(RpcSecurity.MutualTls(_cluster), RpcServerLimits.Default);
        try
        {
            // Act
            for (int i = 0; i < 3; i++) Assert.True(await TlsConnection.RefusedAsync(server, foreign.Certificate), "A certificate of another CA was accepted.");
        }
        finally
        {
            await server.DisposeAsync().AsTask().WaitAsync(Timeout); // ends the interval: the count is written
        }

        // Assert
        var refused = Assert.Single(_log.Lines, line => line.Event == "TlsRefused");
        Assert.Contains($"its client certificate ({foreign.Certificate.Subject}) does not chain to the cluster CA", refused.Message);
        Assert.Contains(_log.Lines, line => line.Event == "RefusalsSummarized" && line.Message == "Refused 2 more TLS handshakes from 127.0.0.1 in the last 10 s");
    }

    [Fact]
    public async Task Handshake_CleartextToTheTlsPort_RefusedAndLogged()
    {
        await using var server = await StartAsync(RpcSecurity.MutualTls(_cluster), RpcServerLimits.Default);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, server.Address.Port).WaitAsync(Timeout);

        bool answered = await SlowLoris.OpenAsync(socket, TimeSpan.FromSeconds(5));
        bool closed = await SlowLoris.ClosedWithinAsync(socket, TimeSpan.FromSeconds(5));

        Assert.False(answered, "A cleartext HTTP/2 connection to the TLS port was answered.");
        Assert.True(closed, "A cleartext HTTP/2 connection to the TLS port was not closed.");
        Assert.Contains(_log.Lines, line => line.Event == "TlsRefused" && line.Message.Contains("it sent no TLS handshake", StringComparison.Ordinal));
    }

    private async Task<RpcServer> StartAsync(RpcSecurity security, RpcServerLimits limits, TimeSpan? answerAfter = null) =>
        await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<AdmittedAgent>()
            .RequireCaller((context, _) =>
            {
                if (!security.TryAuthenticate(context, out var failure)) throw new RpcException(new Status(StatusCode.Unauthenticated, failure));
            }),
            services => services.AddSingleton<ILoggerProvider>(_log).AddSingleton(new AdmittedAgent(answerAfter ?? TimeSpan.Zero)), security, limits).WaitAsync(Timeout);

    private static async Task<NodeInfo> CallAsync(RpcServer server, RpcSecurity security)
    {
        using var channel = RpcChannels.For(server.Address, security);
        return await new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow + Timeout).ResponseAsync.WaitAsync(Timeout);
    }

    /// <summary>Answers GetNodeInfo after <paramref name="answerAfter"/>.</summary>
    private sealed class AdmittedAgent(TimeSpan answerAfter) : Agent.AgentBase
    {
        public override async Task<NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context)
        {
            await Task.Delay(answerAfter, context.CancellationToken);
            return new NodeInfo { NodeName = "admitted" };
        }
    }

    /// <summary>A raw HTTP/2 connection over TLS that makes no call: open, admitted (the server's SETTINGS came), idle.</summary>
    private sealed class TlsConnection : IDisposable
    {
        private readonly Socket _socket;
        private readonly SslStream _tls;

        private TlsConnection(Socket socket, SslStream tls)
        {
            _socket = socket;
            _tls = tls;
        }

        /// <summary>Connects, completes the handshake presenting <paramref name="certificate"/> (or none), and waits for the server's first HTTP/2 frame.</summary>
        public static async Task<TlsConnection> OpenAsync(RpcServer server, X509Certificate2? certificate, IPAddress? from = null)
        {
            var connection = await ConnectAsync(server, certificate, from ?? IPAddress.Loopback);
            try
            {
                await connection._tls.WriteAsync("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x4\0\0\0\0\0"u8.ToArray()).AsTask().WaitAsync(Timeout);
                Assert.True(await connection._tls.ReadAsync(new byte[4096]).AsTask().WaitAsync(Timeout) > 0, "The server closed a connection within its limits.");
                return connection;
            }
            catch
            {
                connection.Dispose();
                throw;
            }
        }

        /// <summary>Whether the server refused a connection presenting <paramref name="certificate"/>: in the handshake, or by closing it before its first frame.</summary>
        public static async Task<bool> RefusedAsync(RpcServer server, X509Certificate2 certificate)
        {
            try
            {
                using var connection = await OpenAsync(server, certificate);
                return false;
            }
            catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException or SocketException or Xunit.Sdk.TrueException)
            {
                return true;
            }
        }

        private static async Task<TlsConnection> ConnectAsync(RpcServer server, X509Certificate2? certificate, IPAddress from)
        {
            var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                socket.Bind(new IPEndPoint(from, 0));
                await socket.ConnectAsync(IPAddress.Loopback, server.Address.Port).WaitAsync(Timeout);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
            var tls = new SslStream(new NetworkStream(socket, ownsSocket: false));
            var connection = new TlsConnection(socket, tls);
            try
            {
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
                {
                    TargetHost = "127.0.0.1",
                    ApplicationProtocols = [SslApplicationProtocol.Http2],
                    ClientCertificates = certificate is null ? null : [certificate],
                    LocalCertificateSelectionCallback = certificate is null ? null : (_, _, _, _, _) => certificate,
                    RemoteCertificateValidationCallback = (_, _, _, _) => true,
                }).WaitAsync(Timeout);
                return connection;
            }
            catch
            {
                connection.Dispose();
                throw;
            }
        }

        /// <summary>Whether the server closed the connection (end of stream or reset) within <paramref name="wait"/>.</summary>
        public async Task<bool> ClosedWithinAsync(TimeSpan wait)
        {
            var buffer = new byte[4096];
            using var timeout = new CancellationTokenSource(wait);
            try
            {
                while (await _tls.ReadAsync(buffer, timeout.Token) > 0)
                {
                }
                return true;
            }
            catch (OperationCanceledException)
            {
                return false;
            }
            catch (IOException)
            {
                return true;
            }
        }

        public void Dispose()
        {
            _tls.Dispose();
            _socket.Dispose();
        }
    }
}
