using Grpc.Core;
using Grpc.Health.V1;
using Grpc.Net.Client;
using Grpc.Reflection.V1Alpha;
using Pmpi.Agent.Hosting;
using Pmpi.Rpc.Security;

namespace Pmpi.Agent.Tests.Hosting;

/// <summary>An agent answers standard gRPC tooling, health and reflection, called with gRPC for .NET's own client and with Python's grpcio.</summary>
public sealed class StandardServicesTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan ScriptTimeout = TimeSpan.FromSeconds(90);

    private static Task<AgentHost> StartAsync() =>
        AgentHost.StartAsync(options =>
        {
            options.Port = 0;
            options.Security = RpcSecurity.ForThisProcess();
        }).WaitAsync(Timeout);

    [Theory]
    [InlineData("")]
    [InlineData("pmpi.v1.Agent")]
    [InlineData("pmpi.v1.Master")]
    public async Task Check_OnAnAgent_AnswersServing(string service)
    {
        // Arrange
        await using var host = await StartAsync();
        using var channel = GrpcChannel.ForAddress(host.Address);

        // Act: no credential; health says nothing but "serving".
        var response = await new Health.HealthClient(channel).CheckAsync(new HealthCheckRequest { Service = service }, deadline: DateTime.UtcNow + Timeout);

        // Assert
        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, response.Status);
    }

    [Fact]
    public async Task Check_ForAServiceTheAgentDoesNotServe_IsNotFound()
    {
        // Arrange
        await using var host = await StartAsync();
        using var channel = GrpcChannel.ForAddress(host.Address);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => new Health.HealthClient(channel)
            .CheckAsync(new HealthCheckRequest { Service = "pmpi.v1.Gateway" }, deadline: DateTime.UtcNow + Timeout).ResponseAsync);

        // Assert
        Assert.Equal(StatusCode.NotFound, error.StatusCode);
    }

    [Fact]
    public async Task ListServices_OnAnAgent_NamesAgentMasterJobControlHealthAndReflection()
    {
        // Arrange
        await using var host = await StartAsync();
        using var channel = GrpcChannel.ForAddress(host.Address);
        using var call = new ServerReflection.ServerReflectionClient(channel).ServerReflectionInfo(deadline: DateTime.UtcNow + Timeout);

        // Act
        await call.RequestStream.WriteAsync(new ServerReflectionRequest { ListServices = "" });
        await call.RequestStream.CompleteAsync();
        Assert.True(await call.ResponseStream.MoveNext(CancellationToken.None));

        // Assert
        var names = call.ResponseStream.Current.ListServicesResponse.Service.Select(service => service.Name).Order(StringComparer.Ordinal);
        Assert.Equal(["grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection", "pmpi.v1.Agent", "pmpi.v1.JobControl", "pmpi.v1.Master"], names);
    }

    [Fact]
    [Trait("Category", "Interop")]
    public async Task GrpcioClient_HealthAndReflection_AnsweredByAnAgent()
    {
        // Arrange: Python's grpcio (Debian's python3-grpcio), a second implementation beside gRPC for .NET's client.
        var generated = Directory.CreateTempSubdirectory("pmpi-grpcio-standard-");
        try
        {
            await GrpcioPython.CompileContractAsync(generated.FullName, ["standard_services.proto"], ScriptTimeout).WaitAsync(ScriptTimeout + Timeout);
            await using var host = await StartAsync();

            // Act
            var (code, transcript) = await ChildProcess.RunAsync(GrpcioPython.Python,
                [Path.Combine(AppContext.BaseDirectory, "Interop", "grpcio_standard_services.py"), generated.FullName, $"127.0.0.1:{host.Address.Port}",
                 "pmpi.v1.Agent", "pmpi.v1.Master", "pmpi.v1.JobControl"], ScriptTimeout, GrpcioPython.Environment).WaitAsync(ScriptTimeout + Timeout);

            // Assert
            Assert.True(code == 0, $"The grpcio client exited with {code}.\n{transcript}");
            Assert.Contains("SERVICES grpc.health.v1.Health grpc.reflection.v1alpha.ServerReflection pmpi.v1.Agent pmpi.v1.JobControl pmpi.v1.Master", transcript, StringComparison.Ordinal);
        }
        finally
        {
            generated.Delete(recursive: true);
        }
    }
}
