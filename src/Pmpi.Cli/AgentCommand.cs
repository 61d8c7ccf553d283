using System.CommandLine;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Hosting;
using Pmpi.Rpc.Security;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi agent`: serves this node (Agent and Master services) on the Generic Host until SIGTERM, Ctrl+C or the service
/// manager stops it, then kills its ranks. It needs the cluster credential (mutual TLS) or --insecure. Stdout carries
/// one line, "pmpi agent listening on https://host:port ...", for whoever started it; the log (one line per event)
/// goes to stderr, or to the journal / Event Log as a service.
/// Exit codes: 0 after a clean stop, 2 for bad options, 1 when the endpoint cannot be bound.
/// </summary>
internal static class AgentCommand
{
    public const string Name = "agent";

    private const int InvalidOptionsExitCode = 2;

    public static Command Create()
    {
        var defaults = new AgentOptions();
        var port = new Option<int>("--port") { Description = "Port to listen on (0: any free port).", DefaultValueFactory = _ => defaults.Port };
        var bind = new Option<string>("--bind") { Description = "IP address to listen on (0.0.0.0: every interface).", DefaultValueFactory = _ => defaults.BindAddress };
        var domain = new Option<string?>("--domain") { Description = "This node's administrative domain." };
        var gateway = new Option<string?>("--gateway") { Description = "The domain's gateway (host:port), shown by `pmpi nodes`." };
        var slots = new Option<int>("--slots") { Description = "Ranks this node takes.", DefaultValueFactory = _ => defaults.Slots };
        var rankAddress = new Option<string>("--rank-address")
        {
            Description = "IP address rank endpoints listen on and advertise, or a host name of this node to resolve to one here.", DefaultValueFactory = _ => defaults.RankBindAddress,
        };
        var stagingDirectory = new Option<string>("--staging-dir")
        {
            Description = "Where to keep the programs jobs ship here (pmpi run --stage), each file once by its hash.", DefaultValueFactory = _ => defaults.StagingDirectory,
        };
        var stagingLimit = new Option<double>("--staging-limit")
        {
            Description = "The most GiB of staged files to keep; the least recently used go first to make room for new ones.", DefaultValueFactory = _ => defaults.StagingLimit / (double)(1L << 30),
        };
        var stopAtInputEnd = new Option<bool>("--stop-at-input-end")
        {
            Description = "Stop, as on SIGTERM, when standard input ends: for a launcher that ends its agents by closing their input (pmpi run under Slurm), so they also stop if it dies.",
        };
        var heartbeatTimeout = LivenessOptions.HeartbeatTimeout(defaults);
        var registerTimeout = LivenessOptions.RegisterTimeout(defaults);
        var security = new SecurityOptions();
        var command = new Command(Name, "Run this node's agent.") { port, bind, domain, gateway, slots, rankAddress, stagingDirectory, stagingLimit, stopAtInputEnd, heartbeatTimeout, registerTimeout };
        security.AddTo(command);
        command.SetAction(async (parse, cancellationToken) =>
        {
            if (security.Resolve(parse, Name, fallback: null, out var error) is not { } rpcSecurity)
            {
                await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
                return InvalidOptionsExitCode;
            }
            if (rpcSecurity == RpcSecurity.Insecure)
                await Console.Error.WriteLineAsync("pmpi agent: WARNING: --insecure: no TLS and no authentication; anyone who reaches this port can run programs as this user.").ConfigureAwait(false);
            if (await ResolveRankAddressAsync(parse.GetValue(rankAddress)!, cancellationToken).ConfigureAwait(false) is not { } rankIp) return InvalidOptionsExitCode;
            AgentHost host;
            try
            {
                host = await AgentHost.StartAsync(options =>
                {
                    options.Port = parse.GetValue(port);
                    options.BindAddress = parse.GetValue(bind)!;
                    options.Domain = parse.GetValue(domain);
                    options.Gateway = parse.GetValue(gateway);
                    options.Slots = parse.GetValue(slots);
                    options.RankBindAddress = rankIp;
                    options.StagingDirectory = Path.GetFullPath(parse.GetValue(stagingDirectory)!);
                    options.StagingLimit = (long)(parse.GetValue(stagingLimit) * (1L << 30));
                    options.Security = rpcSecurity;
                    options.HeartbeatTimeout = TimeSpan.FromSeconds(parse.GetValue(heartbeatTimeout));
                    options.RegistrationTimeout = TimeSpan.FromSeconds(parse.GetValue(registerTimeout));
                }, DaemonHosting.For("pmpi-agent"), cancellationToken).ConfigureAwait(false);
            }
            catch (OptionsValidationException e)
            {
                foreach (var failure in e.Failures) await Console.Error.WriteLineAsync($"pmpi agent: {failure}").ConfigureAwait(false);
                return InvalidOptionsExitCode;
            }
            catch (Exception e) when (e is IOException or SocketException)
            {
                await Console.Error.WriteLineAsync($"pmpi agent: {e.Message}").ConfigureAwait(false);
                return 1;
            }
            await using (host.ConfigureAwait(false))
            {
                var options = host.Services.GetRequiredService<IOptions<AgentOptions>>().Value;
                Console.WriteLine($"pmpi agent listening on {host.Address} (slots {options.Slots}{(options.Domain is null ? "" : $", domain {options.Domain}")})");
                if (parse.GetValue(stopAtInputEnd)) _ = StopAtInputEndAsync(host);
                await host.WaitForShutdownRequestAsync(cancellationToken).ConfigureAwait(false);
            }
            return 0;
        });
        return command;
    }

    /// <summary>--rank-address's IP address: as given, or the best a host name resolves to here (beyond loopback, then IPv4, first); null, said on stderr, when it resolves to none.</summary>
    private static async Task<string?> ResolveRankAddressAsync(string value, CancellationToken cancellationToken)
    {
        if (IPAddress.TryParse(value, out _)) return value;
        try
        {
            var addresses = await Dns.GetHostAddressesAsync(value, cancellationToken).ConfigureAwait(false);
            // Beyond loopback first (a name Debian's /etc/hosts maps to 127.0.1.1 may also have the node's real address), IPv4 first.
            var best = addresses.OrderBy(address => IPAddress.IsLoopback(address) ? 1 : 0).ThenBy(address => address.AddressFamily == AddressFamily.InterNetwork ? 0 : 1).FirstOrDefault();
            if (best is not null) return best.ToString();
        }
        catch (Exception e) when (e is SocketException or ArgumentException)
        {
            await Console.Error.WriteLineAsync($"pmpi agent: --rank-address {value}: {e.Message}").ConfigureAwait(false);
            return null;
        }
        await Console.Error.WriteLineAsync($"pmpi agent: --rank-address {value}: the name resolves to no address here.").ConfigureAwait(false);
        return null;
    }

    /// <summary>Asks <paramref name="host"/> to stop once standard input ends (its content is read and dropped).</summary>
    private static async Task StopAtInputEndAsync(AgentHost host)
    {
        var buffer = new byte[4096];
        try
        {
            await using var input = Console.OpenStandardInput();
            while (await input.ReadAsync(buffer).ConfigureAwait(false) > 0)
            {
            }
        }
        catch (IOException)
        {
            // An input that fails has ended too.
        }
        host.Services.GetRequiredService<IHostApplicationLifetime>().StopApplication();
    }
}
