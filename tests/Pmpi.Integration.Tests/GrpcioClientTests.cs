using System.Text.Json;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A Python grpcio client (the reference gRPC implementation) calls a running `pmpi agent`, with messages protoc
/// generates from proto/pmpi/v1 at test time. Needs Debian's python3-grpcio, python3-protobuf and protobuf-compiler;
/// when they are missing the test fails, saying what to install.
/// </summary>
[Trait("Category", "Interop")]
public sealed class GrpcioClientTests
{
    private const string Python = "/usr/bin/python3";
    private const string Install = "Install them with: apt-get install -y python3-grpcio python3-protobuf protobuf-compiler; CI installs the packages listed in .ci/apt-packages.";

    [Fact]
    public async Task GetNodeInfo_FromGrpcioClient_ReturnsTheAgentsRealNode()
    {
        // Arrange
        using var generated = new ScratchDirectory();
        await CompileContractAsync(generated.Path);
        await using var agent = await AgentProcess.StartAsync("node-a", slots: 3);

        // Act
        await using var client = ChildProcess.Start(Python, [Path.Combine(AppContext.BaseDirectory, "Python", "get_node_info.py"), generated.Path, agent.Endpoint],
            new Dictionary<string, string?> { ["PYTHONNOUSERSITE"] = "1", ["PYTHONDONTWRITEBYTECODE"] = "1" });
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

    private static async Task CompileContractAsync(string output)
    {
        if (!File.Exists(Python)) Assert.Fail($"{Python} is missing: this test needs Debian's Python with grpcio. {Install}");
        await using (var import = ChildProcess.Start(Python, ["-c", "import grpc, google.protobuf"]))
        {
            if (await import.WaitForExitAsync(PmpiCli.Timeout) != 0) Assert.Fail($"{Python} cannot import grpc and google.protobuf. {Install}\n{import.Transcript}");
        }
        var protoRoot = Path.Combine(AppContext.BaseDirectory, "proto");
        string[] protos = ["pmpi/v1/agent.proto", "pmpi/v1/master.proto"];
        ChildProcess protoc;
        try
        {
            protoc = ChildProcess.Start("protoc", [$"-I{protoRoot}", $"--python_out={output}", .. protos]);
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Assert.Fail($"protoc was not found ({e.Message}). {Install}");
            return;
        }
        await using (protoc)
        {
            if (await protoc.WaitForExitAsync(PmpiCli.Timeout) != 0) Assert.Fail($"protoc failed to compile {string.Join(", ", protos)}.\n{protoc.Transcript}");
        }
    }
}
