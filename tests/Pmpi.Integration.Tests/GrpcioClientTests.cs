using System.Text.Json;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A Python grpcio client (the reference gRPC implementation) calls a running `pmpi agent` over mutual TLS with the
/// cluster credential, with messages protoc generates from proto/pmpi/v1 at test time. Needs Debian's python3-grpcio, python3-protobuf and protobuf-compiler;
/// when they are missing the test fails, saying what to install.
/// </summary>
[Trait("Category", "Interop")]
public sealed class GrpcioClientTests
{
    [Fact]
    public async Task GetNodeInfo_FromGrpcioClient_ReturnsTheAgentsRealNode()
    {
        // Arrange
        using var generated = new ScratchDirectory();
        await GrpcioPython.CompileContractAsync(generated.Path, ["pmpi/v1/agent.proto", "pmpi/v1/master.proto", "pmpi/v1/staging.proto"], PmpiCli.Timeout);
        await using var agent = await AgentProcess.StartAsync("node-a", slots: 3);

        // Act
        await using var client = ChildProcess.Start(GrpcioPython.Python, [Path.Combine(AppContext.BaseDirectory, "Python", "get_node_info.py"), generated.Path, agent.Endpoint, TestCluster.Directory],
            GrpcioPython.Environment);
        int code = await client.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0 && client.Stdout.Count == 1, $"The grpcio client exited with {code}.\n{client.Transcript}");
        using var reply = JsonDocument.Parse(client.Stdout[0]);
        var info = reply.RootElement;
        Assert.True(info.GetProperty("logical_cores").GetInt32() > 0, client.Stdout[0]);
        // protobuf's JSON mapping writes int64 as a string.
        Assert.True(long.Parse(info.GetProperty("memory_total_bytes").GetString()!, System.Globalization.CultureInfo.InvariantCulture) > 0, client.Stdout[0]);
        Assert.Equal(3, info.GetProperty("slots").GetInt32());
        Assert.Equal(System.Environment.MachineName, info.GetProperty("node_name").GetString());
        Assert.False(string.IsNullOrEmpty(info.GetProperty("runtime_version").GetString()), client.Stdout[0]);
    }
}
