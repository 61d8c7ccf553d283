using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Integration.Tests.Security;

/// <summary>`pmpi agent` never serves unauthenticated by accident: without a credential it refuses to start unless told --insecure, and then warns.</summary>
[Trait("Category", "Security")]
public sealed class AgentStartTests
{
    [Fact]
    public async Task Agent_NoCredential_Exit2NamingTheOptions()
    {
        await using var agent = PmpiCli.Start(["agent", "--port", "0"], new Dictionary<string, string?> { [ClusterCredentials.EnvironmentVariable] = null });

        int code = await agent.WaitForExitAsync(PmpiCli.Timeout);

        Assert.True(code == 2, $"pmpi agent exited with {code}, expected 2.\n{agent.Transcript}");
        Assert.Contains(agent.Stderr, line => line.Contains("--credentials", StringComparison.Ordinal) && line.Contains("--insecure", StringComparison.Ordinal));
        Assert.DoesNotContain(agent.Stdout, line => line.StartsWith("pmpi agent listening", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Agent_GroupReadableCredential_Exit2NamingTheFile()
    {
        if (OperatingSystem.IsWindows()) return;
        using var scratch = new ScratchDirectory();
        var credentials = ClusterCredentials.Initialize(Path.Combine(scratch.Path, "cluster"), []);
        var key = Path.Combine(credentials.Directory, ClusterCredentials.CertificateKeyFile);
        File.SetUnixFileMode(key, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.OtherRead);
        await using var agent = PmpiCli.Start(["agent", "--port", "0", "--credentials", credentials.Directory]);

        int code = await agent.WaitForExitAsync(PmpiCli.Timeout);

        Assert.True(code == 2, $"pmpi agent exited with {code}, expected 2.\n{agent.Transcript}");
        Assert.Contains(agent.Stderr, line => line.Contains(key, StringComparison.Ordinal) && line.Contains("readable by other users", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Agent_Insecure_WarnsAndServesCleartext()
    {
        int port = PmpiCli.FreePort();
        await using var agent = PmpiCli.Start(["agent", "--port", $"{port}", "--insecure"], new Dictionary<string, string?> { [ClusterCredentials.EnvironmentVariable] = null });

        await agent.WaitForLineAsync(line => line.StartsWith($"pmpi agent listening on http://127.0.0.1:{port}", StringComparison.Ordinal), PmpiCli.Timeout, "the listening line");
        using var channel = RpcChannels.For(new Uri($"http://127.0.0.1:{port}"));
        var info = await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow.AddSeconds(10)).ResponseAsync.WaitAsync(PmpiCli.Timeout);

        Assert.True(info.LogicalCores > 0);
        Assert.Contains(agent.Stderr, line => line.Contains("WARNING: --insecure", StringComparison.Ordinal));
        Assert.Contains(agent.Stderr, line => line.Contains("runs with --insecure", StringComparison.Ordinal));
    }
}
