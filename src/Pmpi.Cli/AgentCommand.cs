using System.CommandLine;
using System.Net;
using System.Runtime.InteropServices;
using Pmpi.Agent.Services;

namespace Pmpi.Cli;

/// <summary>`pmpi agent`: serves this node (Agent and Master services) until SIGTERM or Ctrl+C, then kills its ranks.</summary>
internal static class AgentCommand
{
    public static Command Create()
    {
        var port = new Option<int>("--port") { Description = "Port to listen on.", DefaultValueFactory = _ => 7300 };
        var bind = new Option<string>("--bind") { Description = "Address to listen on.", DefaultValueFactory = _ => "127.0.0.1" };
        var domain = new Option<string?>("--domain") { Description = "This node's administrative domain." };
        var slots = new Option<int>("--slots") { Description = "Ranks this node takes.", DefaultValueFactory = _ => System.Environment.ProcessorCount };
        var rankAddress = new Option<string>("--rank-address") { Description = "Address rank endpoints listen on and advertise.", DefaultValueFactory = _ => "127.0.0.1" };
        var command = new Command("agent", "Run this node's agent.") { port, bind, domain, slots, rankAddress };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var options = new AgentOptions { Domain = parse.GetValue(domain), Slots = parse.GetValue(slots), RankBindAddress = parse.GetValue(rankAddress)! };
            await using var host = await AgentHost.StartAsync(IPAddress.Parse(parse.GetValue(bind)!), parse.GetValue(port), options, cancellationToken);
            Console.WriteLine($"pmpi agent listening on {host.Address} (slots {options.Slots}{(options.Domain is null ? "" : $", domain {options.Domain}")})");
            var stop = new TaskCompletionSource();
            using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
            {
                context.Cancel = true;
                stop.TrySetResult();
            });
            using var registration = cancellationToken.Register(() => stop.TrySetResult());
            await stop.Task;
            Console.WriteLine("pmpi agent stopping: killing its ranks");
            return 0;
        });
        return command;
    }
}
