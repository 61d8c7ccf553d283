using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>A `pmpi gateway` process with the tests' cluster credential, ready once it printed its listening line.</summary>
internal sealed class GatewayProcess : IAsyncDisposable
{
    private GatewayProcess(ChildProcess process, string endpoint)
    {
        Process = process;
        Endpoint = endpoint;
    }

    public ChildProcess Process { get; }

    /// <summary>host:port as a computation file's domain names it.</summary>
    public string Endpoint { get; }

    /// <summary>https://host:port.</summary>
    public Uri Address => new($"https://{Endpoint}");

    /// <summary>
    /// Starts `pmpi gateway --domain <paramref name="domain"/> --bind <paramref name="bind"/> --port <paramref name="port"/>`
    /// (0 picks a free port); <paramref name="launcher"/> (e.g. `ip netns exec NS`) runs it when given and must exec it in place.
    /// </summary>
    public static async Task<GatewayProcess> StartAsync(string domain, string bind = "127.0.0.1", int port = 0, IReadOnlyList<string>? launcher = null)
    {
        string[] arguments = ["gateway", "--domain", domain, "--bind", bind, "--port", $"{port}"];
        var process = launcher is null
            ? PmpiCli.Start(arguments)
            : ChildProcess.Start(launcher[0], [.. launcher.Skip(1), .. PmpiCli.Command, .. arguments], PmpiCli.WithCredential(null));
        try
        {
            var line = await process.WaitForLineAsync(text => text.StartsWith("pmpi gateway listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "its listening line").ConfigureAwait(false);
            var address = new Uri(line.Split(' ')[4]);
            // A wildcard bind is printed as loopback; the endpoint others dial is the bound address then.
            return new GatewayProcess(process, $"{(bind is "0.0.0.0" ? address.Host : bind)}:{address.Port}");
        }
        catch
        {
            await process.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Its counters, read over Gateway.GetStatus as a cluster member (from this network namespace: loopback when launched in one).</summary>
    public async Task<GatewayStatus> StatusAsync(Uri? address = null)
    {
        using var channel = RpcChannels.For(address ?? Address, TestCluster.Security);
        return await new GatewayClient(channel).GetStatusAsync(new GetStatusRequest(), deadline: DateTime.UtcNow.AddSeconds(10)).ResponseAsync
            .WaitAsync(PmpiCli.Timeout).ConfigureAwait(false);
    }

    /// <summary>Kills the gateway by id if it still runs.</summary>
    public ValueTask DisposeAsync() => Process.DisposeAsync();
}
