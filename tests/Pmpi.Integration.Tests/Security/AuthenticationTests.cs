using System.Net.Security;
using System.Net.Sockets;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;
using JobControlClient = Pmpi.Rpc.V1.JobControl.JobControlClient;
using MasterClient = Pmpi.Rpc.V1.Master.MasterClient;

namespace Pmpi.Integration.Tests.Security;

/// <summary>
/// Every method of a real agent and master refuses a caller without the cluster credential, or with another
/// cluster's, logs the refusal with the peer's address, and starts nothing (a marker program proves it).
/// </summary>
[Trait("Category", "Security")]
public sealed class AuthenticationTests(SecurityFixture fixture) : IClassFixture<SecurityFixture>
{
    public static TheoryData<string> MemberMethods => [ServicePaths.GetNodeInfo, ServicePaths.Launch, ServicePaths.Kill, ServicePaths.Submit];

    [Theory]
    [MemberData(nameof(MemberMethods))]
    public async Task MemberMethod_NoClientCertificate_UnauthenticatedLoggedAndNothingRuns(string method)
    {
        // Arrange: a TLS caller that trusts the cluster CA but presents no certificate.
        var marker = fixture.NewMarker();
        using var channel = RpcChannels.For(fixture.Agent.Address, SecurityFixture.NoCredential);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => CallAsync(channel, method, marker)).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.Unauthenticated, error.StatusCode);
        Assert.False(File.Exists(marker), $"{method} without a credential ran the marker program.");
        await fixture.Agent.Process.WaitForLineAsync(line => line.Contains($"Refused {method} from 127.0.0.1:", StringComparison.Ordinal), PmpiCli.Timeout,
            $"the refusal of {method} with the peer's address");
    }

    [Fact]
    public async Task AgentPort_ClientCertificateOfAForeignCa_HandshakeRefused()
    {
        // Arrange: a caller presenting another cluster's certificate (and accepting any server).
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(System.Net.IPAddress.Loopback, fixture.Agent.Port).WaitAsync(PmpiCli.Timeout);
        await using var tls = new SslStream(new NetworkStream(socket), leaveInnerStreamOpen: false);

        // Act: with TLS 1.3 the server judges the client's certificate after the client finished its handshake, so
        // its refusal arrives on the first read.
        var refused = await Record.ExceptionAsync(async () =>
        {
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "127.0.0.1",
                ApplicationProtocols = [SslApplicationProtocol.Http2],
                ClientCertificates = [fixture.Foreign.Certificate],
                LocalCertificateSelectionCallback = (_, _, _, _, _) => fixture.Foreign.Certificate,
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            });
            await tls.WriteAsync("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray());
            if (await tls.ReadAsync(new byte[64]) == 0) throw new IOException("closed without a byte");
        }).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(refused is IOException or System.Security.Authentication.AuthenticationException,
            $"A foreign client certificate was not refused: {refused?.ToString() ?? "the agent answered"}");
        Assert.Equal(4, (await PmpiCli.GetNodeInfoAsync(fixture.Agent.Address)).Slots);
    }

    [Fact]
    public async Task Run_WithAnotherClustersCredential_SaysTheHandshakeFailedAndNothingRuns()
    {
        // Arrange
        var marker = fixture.NewMarker();

        // Act: a member of the foreign cluster submits to this cluster's agent, as a user with the wrong --credentials would.
        await using var run = PmpiCli.Start(["run", "--master", fixture.Agent.Endpoint, "--credentials", fixture.ForeignDirectory, "-n", "1", PmpiCli.TestRanksDll, "marker", marker]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: said in the user's terms, not gRPC's ("Error starting gRPC call. HttpRequestException: ...").
        Assert.True(code == 1, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith($"pmpi: cannot reach the master: the TLS handshake with {fixture.Agent.Endpoint} failed (", StringComparison.Ordinal)
            && line.EndsWith("it is a daemon of another cluster (its certificate is not signed by this credential's CA), one without TLS (--insecure), or not a PMPI daemon.", StringComparison.Ordinal));
        Assert.False(File.Exists(marker), "a submission with another cluster's credential ran the marker program");
    }

    [Fact]
    public async Task Channel_ServerCertificateOfAForeignCa_Refused()
    {
        // Arrange: a member of the foreign cluster calls this cluster's agent: the agent's certificate is not its CA's.
        using var channel = RpcChannels.For(fixture.Agent.Address, RpcSecurity.MutualTls(fixture.Foreign));

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() =>
            new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow.AddSeconds(10)).ResponseAsync).WaitAsync(PmpiCli.Timeout);

        // Assert: gRPC for .NET's client reports a TLS handshake it refused as INTERNAL, naming it.
        Assert.Equal(StatusCode.Internal, error.StatusCode);
        Assert.Contains("The SSL connection could not be established", error.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Submit_Cleartext_ToTheTlsPort_Refused()
    {
        // Arrange: h2c to the TLS port, as an old client or an attacker might.
        var marker = fixture.NewMarker();
        using var channel = RpcChannels.For(new Uri($"http://{fixture.Agent.Endpoint}"));

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => CallAsync(channel, ServicePaths.Submit, marker)).WaitAsync(PmpiCli.Timeout);

        // Assert: the TLS port answers a cleartext preface by failing the handshake and closing. The client reports
        // UNAVAILABLE when the close comes first and INTERNAL when it has read the server's TLS alert as an HTTP/2 frame.
        Assert.True(error.StatusCode is StatusCode.Unavailable or StatusCode.Internal, $"{error.StatusCode}: {error.Status.Detail}");
        Assert.False(File.Exists(marker), "a cleartext Submit ran the marker program");
    }

    [Theory]
    [InlineData("register")]
    [InlineData("abort")]
    public async Task RankMethod_UnknownJobOrWrongKey_PermissionDenied(string method)
    {
        // Arrange: Register and Abort take the job key, not a certificate; a member without it gets no further.
        using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => method == "register"
            ? new JobControlClient(channel).RegisterAsync(new RegisterRequest { JobId = "no-such-job", JobToken = "guess", Endpoint = "http://127.0.0.1:1" }).ResponseAsync
            : new JobControlClient(channel).AbortAsync(new AbortRequest { JobId = "no-such-job", JobToken = "guess", Rank = 0 }).ResponseAsync).WaitAsync(PmpiCli.Timeout);

        // Assert
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
    }

    [Theory]
    [InlineData("register")]
    [InlineData("abort")]
    public async Task RankMethod_RunningJobWithAWrongKey_PermissionDeniedAndTheJobRunsOn(string method)
    {
        // Arrange: a real job of two blocking ranks, submitted to the fixture's agent as master.
        await using var run = PmpiCli.Start(["run", "--master", fixture.Agent.Endpoint, "-n", "2", PmpiCli.TestRanksDll, "block"]);
        List<RankHello> hellos = [];
        try
        {
            for (int rank = 0; rank < 2; rank++)
                await run.WaitForLineAsync(line => line == $"[{rank}] blocking", PmpiCli.Timeout, $"rank {rank} running");
            hellos = RankHello.All(run.Stdout);
            var jobId = hellos[0].JobId;
            using var channel = RpcChannels.For(fixture.Agent.Address, TestCluster.Security);
            var wrongKey = Convert.ToBase64String(new byte[32]);

            // Act
            var error = await Assert.ThrowsAsync<RpcException>(() => method == "register"
                ? new JobControlClient(channel).RegisterAsync(new RegisterRequest { JobId = jobId, JobToken = wrongKey, Rank = 1, Endpoint = "http://127.0.0.1:1" }).ResponseAsync
                : new JobControlClient(channel).AbortAsync(new AbortRequest { JobId = jobId, JobToken = wrongKey, Rank = 0, ErrorCode = 9, Reason = "forged" }).ResponseAsync).WaitAsync(PmpiCli.Timeout);

            // Assert: refused, logged, and the job neither aborted nor gained a rank.
            Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
            Assert.Contains("its key is not the one given", error.Status.Detail, StringComparison.Ordinal);
            var path = method == "register" ? ServicePaths.Register : ServicePaths.Abort;
            await fixture.Agent.Process.WaitForLineAsync(line => line.Contains($"Refused {path} from 127.0.0.1:", StringComparison.Ordinal), PmpiCli.Timeout, "the refusal");
            Assert.False(run.HasExited, $"the job ended after a refused {method}.\n{run.Transcript}");
            Assert.Equal(2, RankProcesses.Survivors(jobId, hellos.Select(h => h.ProcessId)).Count);
        }
        finally
        {
            hellos = RankHello.All(run.Stdout);
            if (hellos.Count > 0) RankProcesses.Kill(hellos[0].JobId, hellos.Select(h => h.ProcessId));
        }
    }

    /// <summary>Calls <paramref name="method"/> as a real client would, with a request that runs the marker program if accepted.</summary>
    private async Task CallAsync(GrpcChannel channel, string method, string marker)
    {
        switch (method)
        {
            case ServicePaths.GetNodeInfo:
                await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow.AddSeconds(10));
                break;
            case ServicePaths.Kill:
                await new AgentClient(channel).KillAsync(new KillRequest { JobId = "any", JobToken = "any" }, deadline: DateTime.UtcNow.AddSeconds(10));
                break;
            case ServicePaths.Launch:
                // A ticket signed with the right key: only the caller's missing certificate may stop it.
                var launch = fixture.MarkerLaunch($"unauthenticated-{Guid.NewGuid():N}", marker, TestCluster.Security);
                using (var call = new AgentClient(channel).Launch(launch, deadline: DateTime.UtcNow.AddSeconds(30)))
                    await call.ResponseStream.ReadToEndAsync(PmpiCli.Timeout);
                break;
            default:
                var xml = $"""
                    <computation name="marker" xmlns="urn:pmpi:computation:v1">
                      <ranks program="{PmpiCli.TestRanksDll}" count="1"><arg>marker</arg><arg>{marker}</arg></ranks>
                    </computation>
                    """;
                using (var call = new MasterClient(channel).Submit(new SubmitRequest { FileName = marker + ".xml", ComputationXml = xml }, deadline: DateTime.UtcNow.AddSeconds(30)))
                    await call.ResponseStream.ReadToEndAsync(PmpiCli.Timeout);
                break;
        }
    }
}
