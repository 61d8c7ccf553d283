using Grpc.Health.V1;
using Grpc.Net.Client;
using Grpc.Reflection.V1Alpha;
using Pmpi.Rpc.Security;

namespace Pmpi.Gateway.Tests;

/// <summary>A gateway answers standard gRPC tooling, called with gRPC for .NET's own client: health and reflection.</summary>
public sealed class StandardServicesTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task CheckAndListServices_OnAGateway_AnswerServingAndNameGatewayHealthAndReflection()
    {
        // Arrange: h2c on loopback, so gRPC for .NET's client needs no cluster certificate.
        await using var gateway = await GatewayHost.StartAsync(options =>
        {
            options.Domain = "a";
            options.BindAddress = "127.0.0.1";
            options.Port = 0;
            options.Security = RpcSecurity.Insecure;
        }).WaitAsync(Timeout);
        using var channel = GrpcChannel.ForAddress(gateway.Address);

        // Act
        var health = await new Health.HealthClient(channel).CheckAsync(new HealthCheckRequest { Service = "pmpi.v1.Gateway" }, deadline: DateTime.UtcNow + Timeout);
        using var call = new ServerReflection.ServerReflectionClient(channel).ServerReflectionInfo(deadline: DateTime.UtcNow + Timeout);
        await call.RequestStream.WriteAsync(new ServerReflectionRequest { ListServices = "" });
        await call.RequestStream.CompleteAsync();
        Assert.True(await call.ResponseStream.MoveNext(CancellationToken.None));

        // Assert
        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health.Status);
        var names = call.ResponseStream.Current.ListServicesResponse.Service.Select(service => service.Name).Order(StringComparer.Ordinal);
        Assert.Equal(["grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection", "pmpi.v1.Gateway"], names);
    }
}
