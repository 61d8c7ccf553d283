using System.CommandLine;
using System.Globalization;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;
using Spectre.Console;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Cli;

/// <summary>`pmpi nodes host:port ...`: asks each agent for its node's metadata and prints a table.</summary>
internal static class NodesCommand
{
    public static Command Create()
    {
        var agents = new Argument<string[]>("agents") { Description = "Agent addresses (host:port, or https://host:port).", Arity = ArgumentArity.OneOrMore };
        var security = new SecurityOptions();
        var command = new Command("nodes", "Describe nodes through their agents.") { agents };
        security.AddTo(command);
        command.SetAction(async (parse, cancellationToken) =>
        {
            if (security.Resolve(parse, "nodes", fallback: null, out var error) is not { } rpcSecurity)
            {
                await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
                return 2;
            }
            var table = new Table().AddColumns("node", "agent", "ranks at", "domain", "gateway", "slots", "cores", "cpu", "load 1/5/15", "memory free/total", "os", "arch", ".NET", "jobs");
            int failures = 0;
            foreach (var agent in parse.GetValue(agents)!)
            {
                if (AgentAddress.TryParse(agent, rpcSecurity) is not { } address)
                {
                    failures++;
                    table.AddRow(Markup.Escape(agent), "", "", "[red]not an address[/]", "", "", "", "expected host:port or http://host:port", "", "", "", "", "", "");
                    continue;
                }
                try
                {
                    using var channel = RpcChannels.For(address, rpcSecurity);
                    var info = await new AgentClient(channel).GetNodeInfoAsync(new NodeInfoRequest(), deadline: DateTime.UtcNow.AddSeconds(10), cancellationToken: cancellationToken);
                    table.AddRow(Markup.Escape(info.NodeName), Markup.Escape(address.Authority), Markup.Escape(info.RankAddress), Markup.Escape(info.Domain), Markup.Escape(info.Gateway), $"{info.Slots}", $"{info.LogicalCores}", Markup.Escape(info.CpuModel),
                        double.IsNaN(info.LoadAverage1) ? "-" : $"{info.LoadAverage1:F2} {info.LoadAverage5:F2} {info.LoadAverage15:F2}",
                        $"{Gib(info.MemoryAvailableBytes)}/{Gib(info.MemoryTotalBytes)} GiB", Markup.Escape($"{info.OsDescription}"), info.Architecture,
                        Markup.Escape(info.RuntimeVersion), Markup.Escape(string.Join(", ", info.RunningJobs)));
                }
                catch (RpcException e)
                {
                    failures++;
                    table.AddRow(Markup.Escape(agent), "", "", e.StatusCode is StatusCode.Unauthenticated or StatusCode.PermissionDenied ? "[red]refused[/]" : "[red]unreachable[/]",
                        "", "", "", Markup.Escape(RpcFailures.Unreached(e, address) ?? e.Status.Detail), "", "", "", "", "", "");
                }
                catch (ArgumentException e)
                {
                    failures++;
                    table.AddRow(Markup.Escape(agent), "", "", "[red]wrong scheme[/]", "", "", "", Markup.Escape(e.Message), "", "", "", "", "", "");
                }
            }
            // Into a file or a pipe there is no terminal to fit or colour: Spectre would assume 80 columns and wrap
            // every cell. Print rows whole, as wide as they are, without escape codes.
            if (Console.IsOutputRedirected)
            {
                AnsiConsole.Profile.Width = RedirectedWidth;
                AnsiConsole.Profile.Capabilities.Ansi = false;
            }
            AnsiConsole.Write(table);
            return failures == 0 ? 0 : 1;
        });
        return command;
    }

    /// <summary>The width of the table when output is redirected: room for every column unwrapped.</summary>
    private const int RedirectedWidth = 1000;

    private static string Gib(long bytes) => bytes < 0 ? "?" : (bytes / (1024.0 * 1024 * 1024)).ToString("F1", CultureInfo.InvariantCulture);
}
