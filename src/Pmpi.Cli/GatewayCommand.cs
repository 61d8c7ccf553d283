using System.CommandLine;
using System.Globalization;
using System.Net.Sockets;
using Grpc.Core;
using Pmpi.Gateway;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;
using GatewayClient = Pmpi.Rpc.V1.Gateway.GatewayClient;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi gateway`: relays rank streams between this administrative domain and the others, for jobs their masters
/// register with it, until SIGTERM, Ctrl+C or the service manager stops it. It needs the cluster credential (mutual
/// TLS) or --insecure. Stdout carries one line, "pmpi gateway listening on https://host:port (domain NAME)"; the log
/// goes to stderr, or to the journal / Event Log as a service.
/// Exit codes: 0 after a clean stop, 2 for bad options, 1 when the endpoint cannot be bound.
/// `pmpi gateway status host:port...` prints each gateway's domain and counters (Gateway.GetStatus, as a cluster member).
/// </summary>
internal static class GatewayCommand
{
    public const string Name = "gateway";

    private const int InvalidOptionsExitCode = 2;

    public static Command Create()
    {
        var defaults = new GatewayOptions();
        var domain = new Option<string>("--domain") { Description = "The administrative domain this gateway serves, as computation files name it.", Required = true };
        var port = new Option<int>("--port") { Description = "Port to listen on (0: any free port).", DefaultValueFactory = _ => defaults.Port };
        var bind = new Option<string>("--bind") { Description = "IP address to listen on (0.0.0.0: every interface).", DefaultValueFactory = _ => defaults.BindAddress };
        var idle = new Option<double>("--stream-idle-timeout")
        {
            Description = "Seconds a relayed rank stream may carry nothing before it is ended.",
            DefaultValueFactory = _ => defaults.StreamIdleTimeout.TotalSeconds,
        };
        var dialOut = new Option<string[]>("--dial-out")
        {
            Description = "A peer gateway (host:port) that cannot dial this one (NAT, or a firewall that lets nothing in): this gateway dials it and carries its connections. Repeatable.",
            AllowMultipleArgumentsPerToken = false,
        };
        var security = new SecurityOptions();
        var command = new Command(Name, "Run this domain's gateway.") { domain, port, bind, idle, dialOut, CreateStatus() };
        security.AddTo(command);
        command.SetAction(async (parse, cancellationToken) =>
        {
            // A relayed rank stream's read continues on the socket engine's own thread, which writes the bytes on at
            // once, instead of waking a thread-pool thread for it at each hop: through a gateway pair a 1 B message
            // took 164 µs with the hop and 51 µs without (bench-log/2026-11-30-gateway-inline-completions.md). The
            // relay's continuations never block. Read once, when the socket engine starts: before any socket here.
            System.Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");
            if (security.Resolve(parse, Name, fallback: null, out var error) is not { } rpcSecurity)
            {
                await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
                return InvalidOptionsExitCode;
            }
            if (rpcSecurity == RpcSecurity.Insecure)
                await Console.Error.WriteLineAsync("pmpi gateway: WARNING: --insecure: no TLS and no authentication; anyone who reaches this port can register jobs and relay through it.").ConfigureAwait(false);
            GatewayHost host;
            try
            {
                host = await GatewayHost.StartAsync(options =>
                {
                    options.Domain = parse.GetValue(domain)!;
                    options.Port = parse.GetValue(port);
                    options.BindAddress = parse.GetValue(bind)!;
                    options.StreamIdleTimeout = TimeSpan.FromSeconds(parse.GetValue(idle));
                    options.Security = rpcSecurity;
                    foreach (var peer in parse.GetValue(dialOut) ?? []) options.DialOut.Add(peer);
                }, DaemonHosting.For("pmpi-gateway"), cancellationToken).ConfigureAwait(false);
            }
            catch (ArgumentException e)
            {
                foreach (var line in e.Message.Split(System.Environment.NewLine)) await Console.Error.WriteLineAsync($"pmpi gateway: {line}").ConfigureAwait(false);
                return InvalidOptionsExitCode;
            }
            catch (Exception e) when (e is IOException or SocketException)
            {
                await Console.Error.WriteLineAsync($"pmpi gateway: {e.Message}").ConfigureAwait(false);
                return 1;
            }
            await using (host.ConfigureAwait(false))
            {
                Console.WriteLine($"pmpi gateway listening on {host.Address} (domain {parse.GetValue(domain)})");
                await host.WaitForShutdownRequestAsync(cancellationToken).ConfigureAwait(false);
            }
            return 0;
        });
        return command;
    }

    /// <summary>`pmpi gateway status ADDRESS...`: each gateway's domain and counters, one line each; exit 1 if one did not answer.</summary>
    private static Command CreateStatus()
    {
        var addresses = new Argument<string[]>("gateway") { Description = "Gateways as host:port.", Arity = ArgumentArity.OneOrMore };
        var security = new SecurityOptions();
        var command = new Command("status", "Show gateways' domains and what they relayed.") { addresses };
        security.AddTo(command);
        command.SetAction(async (parse, cancellationToken) =>
        {
            if (security.Resolve(parse, $"{Name} status", fallback: null, out var error) is not { } rpcSecurity)
            {
                await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
                return InvalidOptionsExitCode;
            }
            int code = 0;
            foreach (var gateway in parse.GetValue(addresses)!)
            {
                try
                {
                    using var channel = RpcChannels.For(rpcSecurity.AddressOf(gateway), rpcSecurity);
                    var status = await new GatewayClient(channel).GetStatusAsync(new GetStatusRequest(), deadline: DateTime.UtcNow.AddSeconds(10), cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{gateway} domain={status.Domain} jobs={status.Jobs} streams_open={status.StreamsOpen} streams_relayed={status.StreamsRelayed} bytes_relayed={status.BytesRelayed} streams_refused={status.StreamsRefused} control_calls_relayed={status.ControlCallsRelayed} tunnels_open={status.TunnelsOpen}"));
                }
                catch (Exception e) when (e is RpcException or ArgumentException or UriFormatException)
                {
                    await Console.Error.WriteLineAsync($"pmpi gateway status: {gateway}: {(e is RpcException rpc ? RpcFailures.Describe(rpc, rpcSecurity.AddressOf(gateway)) : e.Message)}").ConfigureAwait(false);
                    code = 1;
                }
            }
            return code;
        });
        return command;
    }
}
