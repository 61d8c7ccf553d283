using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Client;

/// <summary>
/// A call that never reached its daemon is described in plain words, against real sockets and servers on loopback:
/// nothing listening, TLS to a cleartext port, cleartext to a TLS port; a call the daemon answered is not.
/// </summary>
public sealed class RpcFailuresTests : IDisposable
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;
    private readonly string _root = Directory.CreateTempSubdirectory("pmpi-failures-tests-").FullName;
    private readonly ClusterCredentials _cluster;

    public RpcFailuresTests() => _cluster = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public async Task Unreached_NothingListening_SaysConnectionRefused()
    {
        // Arrange: a port that was free a moment ago, now closed.
        int port;
        using (var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        }
        var address = new Uri($"http://127.0.0.1:{port}");

        // Act
        var error = await CallAsync(address, RpcSecurity.Insecure);

        // Assert
        Assert.Equal($"nothing listens at 127.0.0.1:{port} (connection refused): no daemon runs on that port there", RpcFailures.Unreached(error, address));
    }

    [Fact]
    public async Task Unreached_TlsToACleartextServer_SaysTheHandshakeFailed()
    {
        // Arrange
        await using var server = await TestServer.StartAsync().WaitAsync(Timeout);
        var address = new Uri($"https://{server.Address.Authority}");

        // Act
        var error = await CallAsync(address, RpcSecurity.MutualTls(_cluster));

        // Assert
        var why = RpcFailures.Unreached(error, address);
        Assert.StartsWith($"the TLS handshake with {server.Address.Authority} failed (", why, StringComparison.Ordinal);
        Assert.EndsWith("one without TLS (--insecure), or not a PMPI daemon", why, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Unreached_CleartextToATlsServer_SaysItSpeaksTls()
    {
        // Arrange
        await using var server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<NodeAgent>(),
            security: RpcSecurity.MutualTls(_cluster)).WaitAsync(Timeout);
        var address = new Uri($"http://{server.Address.Authority}");

        // Act
        var error = await CallAsync(address, RpcSecurity.Insecure);

        // Assert
        Assert.Equal($"{server.Address.Authority} does not speak gRPC in cleartext (--insecure): a daemon with the cluster credential speaks TLS; give the credential instead",
            RpcFailures.Unreached(error, address));
    }

    [Fact]
    public async Task Unreached_TheDaemonAnswered_IsNullAndDescribeGivesItsStatus()
    {
        // Arrange: a server that serves no Master service.
        await using var server = await TestServer.StartAsync().WaitAsync(Timeout);
        using var channel = RpcChannels.For(server.Address);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => new Master.MasterClient(channel).Submit(new SubmitRequest(), deadline: DateTime.UtcNow + Timeout)
            .ResponseStream.MoveNext()).WaitAsync(Timeout);

        // Assert
        Assert.Null(RpcFailures.Unreached(error, server.Address));
        Assert.StartsWith("Unimplemented: ", RpcFailures.Describe(error, server.Address), StringComparison.Ordinal);
    }

    private static async Task<RpcException> CallAsync(Uri address, RpcSecurity security)
    {
        using var channel = RpcChannels.For(address, security);
        return await Assert.ThrowsAsync<RpcException>(() =>
            new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow + Timeout).ResponseAsync).WaitAsync(Timeout);
    }

    private sealed class NodeAgent : Agent.AgentBase
    {
        public override Task<NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context) => Task.FromResult(new NodeInfo { NodeName = "tls" });
    }
}
