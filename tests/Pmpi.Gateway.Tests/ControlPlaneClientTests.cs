using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// Every method of a gateway, called with gRPC for .NET's generated client over <see cref="RpcChannels"/>: a caller
/// without the cluster's certificate is refused as UNAUTHENTICATED; a member gets past the caller check.
/// </summary>
public sealed class ControlPlaneClientTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>The gateway's methods.</summary>
    public static TheoryData<string> Methods => ["Gateway.RegisterJob", "Gateway.RemoveJob", "Gateway.GetStatus"];

    private static async Task CallAsync(string method, Grpc.Net.Client.GrpcChannel channel)
    {
        var gateway = new GatewayClient(channel);
        var deadline = DateTime.UtcNow + Timeout;
        switch (method)
        {
            case "Gateway.RegisterJob":
                await gateway.RegisterJobAsync(new RegisterJobRequest(), deadline: deadline);
                break;
            case "Gateway.RemoveJob":
                await gateway.RemoveJobAsync(new RemoveJobRequest { JobId = "no-such-job" }, deadline: deadline);
                break;
            case "Gateway.GetStatus":
                await gateway.GetStatusAsync(new GetStatusRequest(), deadline: deadline);
                break;
        }
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task Call_WithoutTheClusterCertificate_IsUnauthenticated(string method)
    {
        // Arrange: TLS that trusts the cluster, but no client certificate.
        await using var pair = await GatewayPair.StartAsync().WaitAsync(Timeout);
        using var channel = RpcChannels.For(pair.A.Address, RpcSecurity.TrustingAuthority(pair.Credentials.Authority));

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => CallAsync(method, channel));

        // Assert
        Assert.True(error.StatusCode == StatusCode.Unauthenticated, $"{error.StatusCode}: {error.Status.Detail}");
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task Call_AsAMember_GetsPastTheCallerCheck(string method)
    {
        // Arrange
        await using var pair = await GatewayPair.StartAsync().WaitAsync(Timeout);
        using var channel = RpcChannels.For(pair.A.Address, pair.Member);

        // Act: GetStatus answers; the others refuse or ignore a job the gateway never had, each for its own reason.
        var error = await Record.ExceptionAsync(() => CallAsync(method, channel));

        // Assert
        if (method == "Gateway.GetStatus") Assert.Null(error);
        else Assert.True(error is null or RpcException { StatusCode: not StatusCode.Unauthenticated and not StatusCode.Unavailable and not StatusCode.Unimplemented },
            $"{method}: {error}");
    }
}
