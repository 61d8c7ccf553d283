using System.Net;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>The built `pmpi` CLI and test rank program (copied next to the tests), run as real processes.</summary>
internal static class PmpiCli
{
    /// <summary>A bound for anything a test waits on that should take seconds.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>The environment variable naming a native `pmpi` executable to test instead of the built pmpi.dll.</summary>
    public const string NativeCliVariable = "PMPI_TEST_CLI";

    /// <summary>
    /// How to start the CLI: `dotnet pmpi.dll` as built beside the tests, or the native executable that
    /// <see cref="NativeCliVariable"/> names (.ci/run points it at the Native AOT publish, so every test here also
    /// runs against that build).
    /// </summary>
    public static IReadOnlyList<string> Command =>
        System.Environment.GetEnvironmentVariable(NativeCliVariable) is { Length: > 0 } native ? [native] : [DotnetHost, Artifact("pmpi.dll")];

    /// <summary>Pmpi.TestRanks.dll, the rank program whose first argument picks a scenario.</summary>
    public static string TestRanksDll => Artifact("Pmpi.TestRanks.dll");

    /// <summary>Pmpi.Osu.dll, the OSU micro-benchmarks (bench/Pmpi.Osu), whose first argument picks a benchmark.</summary>
    public static string OsuDll => Artifact("Pmpi.Osu.dll");

    /// <summary>The dotnet host running this test, so children use the same runtime.</summary>
    public static string DotnetHost
    {
        get
        {
            if (System.Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host)) return host;
            if (System.Environment.ProcessPath is { } current && Path.GetFileNameWithoutExtension(current) == "dotnet") return current;
            Assert.Fail("Cannot find the dotnet host: run the tests with `dotnet test` (it sets DOTNET_HOST_PATH).");
            return "";
        }
    }

    /// <summary>
    /// Starts `pmpi <paramref name="arguments"/>` with the tests' cluster credential (PMPI_CREDENTIALS) and temporary
    /// directory (TMPDIR), unless <paramref name="environment"/> says otherwise (a null value removes a variable); its
    /// input is closed at once unless <paramref name="keepInputOpen"/>.
    /// </summary>
    public static ChildProcess Start(IEnumerable<string> arguments, IReadOnlyDictionary<string, string?>? environment = null, string? workingDirectory = null,
        bool keepInputOpen = false)
    {
        var command = Command;
        return ChildProcess.Start(command[0], [.. command.Skip(1), .. arguments], WithCredential(environment), workingDirectory, keepInputOpen);
    }

    /// <summary>The environment of a `pmpi` process: the tests' credential and TMPDIR, then <paramref name="environment"/> over them.</summary>
    public static Dictionary<string, string?> WithCredential(IReadOnlyDictionary<string, string?>? environment)
    {
        var withCredential = new Dictionary<string, string?>
        {
            [ClusterCredentials.EnvironmentVariable] = TestCluster.Directory,
            ["TMPDIR"] = TestCluster.TempDirectory,
        };
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>()) withCredential[name] = value;
        return withCredential;
    }

    /// <summary>A port that was free a moment ago on 127.0.0.1, for a process that must be told its port.</summary>
    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Calls Agent.GetNodeInfo at <paramref name="address"/> as a member of the tests' cluster.</summary>
    public static async Task<NodeInfo> GetNodeInfoAsync(Uri address)
    {
        using var channel = RpcChannels.For(address, TestCluster.Security);
        return await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow.AddSeconds(10)).ResponseAsync
            .WaitAsync(Timeout).ConfigureAwait(false);
    }

    private static string Artifact(string name)
    {
        var path = Path.Combine(AppContext.BaseDirectory, name);
        if (!File.Exists(path)) Assert.Fail($"{path} is missing: build the solution (Pmpi.Integration.Tests references the project that makes it).");
        return path;
    }
}

/// <summary>A `pmpi agent` process with the tests' cluster credential on a free loopback port, ready (it answered GetNodeInfo) once started.</summary>
internal sealed class AgentProcess : IAsyncDisposable
{
    /// <summary>The variable an agent's ranks inherit and print, so a test sees which agent launched a rank.</summary>
    public const string LabelVariable = "TESTRANKS_AGENT";

    private AgentProcess(ChildProcess process, int port)
    {
        Process = process;
        Port = port;
    }

    /// <summary>The agent's process.</summary>
    public ChildProcess Process { get; }

    /// <summary>Where it listens.</summary>
    public int Port { get; }

    /// <summary>https://127.0.0.1:port.</summary>
    public Uri Address => new($"https://127.0.0.1:{Port}");

    /// <summary>host:port as a computation file's node names it.</summary>
    public string Endpoint => $"127.0.0.1:{Port}";

    /// <summary>
    /// Starts `pmpi agent --port P --slots <paramref name="slots"/>`, its ranks labelled <paramref name="label"/>;
    /// <paramref name="launcher"/> (e.g. prlimit and its flags) runs it when given and must exec it in place;
    /// <paramref name="domain"/>, <paramref name="gateway"/> and <paramref name="stagingDirectory"/> are its --domain,
    /// --gateway and --staging-dir.
    /// </summary>
    public static async Task<AgentProcess> StartAsync(string label, int slots, IReadOnlyList<string>? launcher = null, string? domain = null, string? gateway = null,
        string? stagingDirectory = null, string? stagingLimitGib = null)
    {
        // The port is free when picked but another process may take it before the agent binds: then try another.
        for (int attempt = 1; ; attempt++)
        {
            int port = PmpiCli.FreePort();
            string[] arguments = ["agent", "--port", $"{port}", "--slots", $"{slots}", .. domain is null ? Array.Empty<string>() : ["--domain", domain], .. gateway is null ? Array.Empty<string>() : ["--gateway", gateway],
                .. stagingDirectory is null ? Array.Empty<string>() : ["--staging-dir", stagingDirectory],
                .. stagingLimitGib is null ? Array.Empty<string>() : ["--staging-limit", stagingLimitGib]];
            var environment = new Dictionary<string, string?> { [LabelVariable] = label };
            var process = launcher is null
                ? PmpiCli.Start(arguments, environment)
                : ChildProcess.Start(launcher[0], [.. launcher.Skip(1), .. PmpiCli.Command, .. arguments], PmpiCli.WithCredential(environment));
            var agent = new AgentProcess(process, port);
            try
            {
                await agent.WaitUntilServingAsync().ConfigureAwait(false);
                return agent;
            }
            catch (Exception) when (process.HasExited && attempt < 3)
            {
                await agent.DisposeAsync().ConfigureAwait(false);
            }
            catch
            {
                await agent.DisposeAsync().ConfigureAwait(false);
                throw;
            }
        }
    }

    /// <summary>Kills the agent (and whatever it still runs) by id if it is still running.</summary>
    public ValueTask DisposeAsync() => Process.DisposeAsync();

    private async Task WaitUntilServingAsync()
    {
        var deadline = DateTime.UtcNow + PmpiCli.Timeout;
        while (true)
        {
            if (Process.HasExited) throw new InvalidOperationException($"pmpi agent exited before serving.\n{Process.Transcript}");
            try
            {
                await PmpiCli.GetNodeInfoAsync(Address).ConfigureAwait(false);
                return;
            }
            catch (RpcException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(100).ConfigureAwait(false);
            }
            catch (RpcException e)
            {
                throw new TimeoutException($"pmpi agent did not answer GetNodeInfo on port {Port} within {PmpiCli.Timeout}: {e.Message}\n{Process.Transcript}", e);
            }
        }
    }
}
