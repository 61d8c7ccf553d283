using System.Net;
using System.Net.Http.Headers;
using System.Net.Security;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests;

/// <summary>One `pmpi agent` process shared by the tests of <see cref="AgentRobustnessTests"/>.</summary>
public sealed class AgentFixture : IAsyncLifetime
{
    internal AgentProcess Agent { get; private set; } = null!;

    public async Task InitializeAsync() => Agent = await AgentProcess.StartAsync("robust", slots: 1);

    public async Task DisposeAsync() => await Agent.DisposeAsync();
}

/// <summary>Whatever arrives on an agent's port, the agent answers with an error it can name and keeps serving.</summary>
public sealed class AgentRobustnessTests(AgentFixture fixture) : IClassFixture<AgentFixture>
{
    private const string NodeInfoPath = ServicePaths.GetNodeInfo;

    [Fact]
    public async Task AgentPort_GarbageBytesInsteadOfTls_ConnectionClosedAndAgentKeepsServing()
    {
        // Arrange
        var garbage = new byte[4096];
        new Random(7).NextBytes(garbage);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, fixture.Agent.Port).WaitAsync(PmpiCli.Timeout);

        // Act
        await socket.SendAsync(garbage, SocketFlags.None).WaitAsync(PmpiCli.Timeout);
        var reply = await ReadUntilClosedAsync(new NetworkStream(socket));

        // Assert: not a TLS handshake, so at most an alert (a TLS record of type 21) before the agent closes.
        Assert.True(reply.Length == 0 || reply[0] == 21, $"Expected the connection closed, at most after a TLS alert; got {Convert.ToHexString(reply)}");
        await AssertStillServingAsync();
    }

    [Fact]
    public async Task AgentPort_GarbageBytesInsideTls_ConnectionRefusedWithGoAwayAndAgentKeepsServing()
    {
        // Arrange: a cluster member's TLS connection, negotiating h2, whose first bytes are not the HTTP/2 preface.
        var garbage = new byte[4096];
        new Random(7).NextBytes(garbage);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, fixture.Agent.Port).WaitAsync(PmpiCli.Timeout);
        await using var tls = new SslStream(new NetworkStream(socket), leaveInnerStreamOpen: false);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            ApplicationProtocols = [SslApplicationProtocol.Http2],
            ClientCertificates = [TestCluster.Credentials.Certificate],
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        }).WaitAsync(PmpiCli.Timeout);

        // Act
        await tls.WriteAsync(garbage).AsTask().WaitAsync(PmpiCli.Timeout);
        var reply = await ReadUntilClosedAsync(tls);

        // Assert: HTTP/2 (RFC 9113 §3.4) answers a bad connection preface with GOAWAY(PROTOCOL_ERROR) and closes.
        Assert.True(reply.Length >= 17, $"Expected a GOAWAY frame, got {reply.Length} bytes: {Convert.ToHexString(reply)}");
        Assert.Equal(0x7, reply[3]); // frame type GOAWAY
        Assert.Equal(0x1, (reply[13] << 24) | (reply[14] << 16) | (reply[15] << 8) | reply[16]); // PROTOCOL_ERROR
        await AssertStillServingAsync();
    }

    /// <summary>Each malformed request and the status gRPC for .NET (which serves the agent) answers it with.</summary>
    public static TheoryData<string, byte[], StatusCode, string> MalformedMessages => new()
    {
        // Not a protobuf message: field 31 with wire type 7, which does not exist. Parsing fails inside the call.
        { "invalid protobuf", [0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF], StatusCode.Unknown, "InvalidProtocolBufferException" },
        // The prefix announces 100 bytes, 3 follow, then the request ends.
        { "truncated", [0, 0, 0, 0, 100, 1, 2, 3], StatusCode.Internal, "Incomplete message" },
        // A 2 GB message would exhaust memory: refused from its prefix alone.
        { "oversized", [0, 0x7F, 0xFF, 0xFF, 0xFF], StatusCode.ResourceExhausted, "exceeds the maximum configured message size" },
        // Compressed, but the call named no grpc-encoding.
        { "compressed", [1, 0, 0, 0, 0], StatusCode.Internal, "did not include grpc-encoding" },
    };

    [Theory]
    [MemberData(nameof(MalformedMessages))]
    public async Task GetNodeInfo_MalformedGrpcMessage_FailsWithStatusAndAgentKeepsServing(string what, byte[] body, StatusCode expected, string detail)
    {
        // Arrange
        using var http = Http2Client();
        using var request = GrpcRequest(NodeInfoPath, body);

        // Act
        var (status, message) = await CallAsync(http, request);

        // Assert
        Assert.True(status == expected && message.Contains(detail, StringComparison.Ordinal),
            $"A {what} message got grpc-status {status} '{message}', expected {expected} mentioning '{detail}'.");
        await AssertStillServingAsync();
    }

    [Theory]
    [InlineData("/pmpi.v1.Agent/NoSuchMethod")]
    [InlineData("/pmpi.v1.NoSuchService/GetNodeInfo")]
    public async Task AgentPort_UnknownMethod_FailsUnimplementedAndAgentKeepsServing(string path)
    {
        // Arrange
        using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);
        var method = GrpcMethods.Create<NodeInfoRequest, NodeInfo>(MethodType.Unary, path);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => channel.CreateCallInvoker()
            .AsyncUnaryCall(method, null, new CallOptions(deadline: DateTime.UtcNow.AddSeconds(10)), new NodeInfoRequest()).ResponseAsync).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.Unimplemented, error.StatusCode);
        Assert.Contains("is unimplemented", error.Status.Detail, StringComparison.Ordinal);
        await AssertStillServingAsync();
    }

    [Fact]
    public async Task GetNodeInfo_NotGrpcContentType_AnswersHttp415AndAgentKeepsServing()
    {
        // Arrange
        using var http = Http2Client();
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(fixture.Agent.Address, NodeInfoPath))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json"),
        };

        // Act
        using var response = await http.SendAsync(request).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        await AssertStillServingAsync();
    }

    private async Task AssertStillServingAsync()
    {
        var info = await PmpiCli.GetNodeInfoAsync(fixture.Agent.Address);
        Assert.Equal(1, info.Slots);
        Assert.False(fixture.Agent.Process.HasExited, $"The agent exited.\n{fixture.Agent.Process.Transcript}");
    }

    /// <summary>A raw HTTP/2 client speaking TLS as a cluster member, for requests a gRPC client would not send.</summary>
    private static HttpClient Http2Client() => new(new SocketsHttpHandler
    {
        UseProxy = false,
        SslOptions = new SslClientAuthenticationOptions
        {
            ClientCertificates = [TestCluster.Credentials.Certificate],
            // The agent's certificate is checked by the other tests; these send malformed requests.
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        },
    }) { Timeout = PmpiCli.Timeout };

    private HttpRequestMessage GrpcRequest(string path, byte[] body)
    {
        var content = new ByteArrayContent(body);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/grpc");
        var request = new HttpRequestMessage(HttpMethod.Post, new Uri(fixture.Agent.Address, path))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = content,
        };
        request.Headers.TryAddWithoutValidation("te", "trailers");
        return request;
    }

    /// <summary>The call's grpc-status and grpc-message, from the headers (trailers-only) or the trailers.</summary>
    private static async Task<(StatusCode Status, string Message)> CallAsync(HttpClient http, HttpRequestMessage request)
    {
        using var response = await http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(PmpiCli.Timeout);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await response.Content.CopyToAsync(Stream.Null).WaitAsync(PmpiCli.Timeout);
        var headers = response.Headers.Contains("grpc-status") ? response.Headers : response.TrailingHeaders;
        Assert.True(headers.TryGetValues("grpc-status", out var status), "The response carries no grpc-status.");
        var message = headers.TryGetValues("grpc-message", out var messages) ? Uri.UnescapeDataString(messages.Single()) : "";
        return ((StatusCode)int.Parse(status.Single(), System.Globalization.CultureInfo.InvariantCulture), message);
    }

    private static async Task<byte[]> ReadUntilClosedAsync(Stream stream)
    {
        var received = new MemoryStream();
        var buffer = new byte[4096];
        using var cancel = new CancellationTokenSource(PmpiCli.Timeout);
        try
        {
            while (await stream.ReadAsync(buffer, cancel.Token) is var n and > 0) received.Write(buffer, 0, n);
        }
        catch (IOException)
        {
            // Reset after the GOAWAY or the alert: what arrived before is the answer.
        }
        return received.ToArray();
    }
}
