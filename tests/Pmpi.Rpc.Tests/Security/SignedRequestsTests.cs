using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Security.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Security;

/// <summary>
/// Request signing on a real loopback server: a call signed with the secret passes; one unsigned, signed with
/// another secret, replayed, or outside the time window is UNAUTHENTICATED before its request is read.
/// </summary>
public sealed class SignedRequestsTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly byte[] _secret = RandomNumberGenerator.GetBytes(32);
    private RpcSecurity _security = null!;
    private RpcServer _server = null!;

    public async Task InitializeAsync()
    {
        _security = RpcSecurity.SignedRequests(_secret);
        _server = await RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints =>
            endpoints.MapGrpcService<SignedAgent>().RequireCaller((context, _) =>
            {
                if (!_security.TryAuthenticate(context, out var failure)) throw new RpcException(new Status(StatusCode.Unauthenticated, failure));
            }), security: _security).WaitAsync(Timeout);
    }

    public async Task DisposeAsync() => await _server.DisposeAsync();

    [Fact]
    public async Task Call_SignedWithTheSecret_Answered()
    {
        using var channel = RpcChannels.For(_server.Address, _security);

        var info = await new Agent.AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);

        Assert.Equal("signed", info.NodeName);
    }

    [Theory]
    [InlineData("unsigned", "carries no pmpi-signature")]
    [InlineData("another secret", "not made with this run's secret")]
    [InlineData("stale", "outside the 30 s window")]
    [InlineData("malformed", "malformed")]
    public async Task Call_BadSignature_Unauthenticated(string what, string reason)
    {
        var signature = what switch
        {
            "unsigned" => null,
            "another secret" => Sign(RandomNumberGenerator.GetBytes(32), DateTimeOffset.UtcNow),
            "stale" => Sign(_secret, DateTimeOffset.UtcNow.AddMinutes(-2)),
            _ => "1.2.3",
        };

        var (status, message) = await CallAsync(signature);

        Assert.Equal(StatusCode.Unauthenticated, status);
        Assert.Contains(reason, message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Call_ReplayedSignature_UnauthenticatedTheSecondTime()
    {
        var signature = Sign(_secret, DateTimeOffset.UtcNow);

        var first = await CallAsync(signature);
        var second = await CallAsync(signature);

        Assert.Equal(StatusCode.OK, first.Status);
        Assert.Equal(StatusCode.Unauthenticated, second.Status);
        Assert.Contains("already used", second.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartAsync_SignedRequestsBeyondLoopback_Refused()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(() => RpcServer.StartAsync(IPAddress.Any, 0, _ => { }, security: _security)).WaitAsync(Timeout);

        Assert.Contains("loopback only", error.Message);
    }

    private sealed class SignedAgent : Agent.AgentBase
    {
        public override Task<NodeInfo> GetNodeInfo(NodeInfoRequest request, ServerCallContext context) => Task.FromResult(new NodeInfo { NodeName = "signed" });
    }

    /// <summary>A signature as the scheme defines it: unix-ms.nonce.base64(HMAC-SHA256(secret, path \n unix-ms \n nonce)).</summary>
    private static string Sign(byte[] secret, DateTimeOffset time)
    {
        var ms = time.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture);
        var nonce = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
        var mac = HMACSHA256.HashData(secret, Encoding.UTF8.GetBytes($"{ServicePaths.GetNodeInfo}\n{ms}\n{nonce}"));
        return $"{ms}.{nonce}.{Convert.ToBase64String(mac)}";
    }

    /// <summary>One raw HTTP/2 call of GetNodeInfo carrying <paramref name="signature"/>; its grpc-status and message.</summary>
    private async Task<(StatusCode Status, string Message)> CallAsync(string? signature)
    {
        using var http = new HttpClient(new SocketsHttpHandler { UseProxy = false }) { Timeout = Timeout };
        var content = new ByteArrayContent([0, 0, 0, 0, 0]);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/grpc");
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(_server.Address, ServicePaths.GetNodeInfo))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = content,
        };
        request.Headers.TryAddWithoutValidation("te", "trailers");
        if (signature is not null) request.Headers.TryAddWithoutValidation(SignedRequestSecurity.Header, signature);
        using var response = await http.SendAsync(request).WaitAsync(Timeout);
        await response.Content.ReadAsByteArrayAsync();
        var headers = response.Headers.Contains("grpc-status") ? response.Headers : response.TrailingHeaders;
        var message = headers.TryGetValues("grpc-message", out var messages) ? Uri.UnescapeDataString(messages.Single()) : "";
        return ((StatusCode)int.Parse(headers.GetValues("grpc-status").Single(), CultureInfo.InvariantCulture), message);
    }
}
