using System.CommandLine;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Console;
using Microsoft.Extensions.Logging.EventLog;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Services;
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
        var rankAddress = new Option<string>("--rank-address") { Description = "IP address rank endpoints listen on and advertise.", DefaultValueFactory = _ => defaults.RankBindAddress };
        var heartbeatTimeout = LivenessOptions.HeartbeatTimeout(defaults);
        var registerTimeout = LivenessOptions.RegisterTimeout(defaults);
        var security = new SecurityOptions();
        var command = new Command(Name, "Run this node's agent.") { port, bind, domain, gateway, slots, rankAddress, heartbeatTimeout, registerTimeout };
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
                    options.RankBindAddress = parse.GetValue(rankAddress)!;
                    options.Security = rpcSecurity;
                    options.HeartbeatTimeout = TimeSpan.FromSeconds(parse.GetValue(heartbeatTimeout));
                    options.RegistrationTimeout = TimeSpan.FromSeconds(parse.GetValue(registerTimeout));
                }, ConfigureDaemon, cancellationToken).ConfigureAwait(false);
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
                await host.WaitForShutdownRequestAsync(cancellationToken).ConfigureAwait(false);
            }
            return 0;
        });
        return command;
    }

    /// <summary>Logging and lifetime for a daemon, `pmpi agent` or `pmpi gateway` (the embedded agent of `pmpi run` keeps the silent defaults).</summary>
    internal static void ConfigureDaemon(IHostApplicationBuilder host)
    {
        // The standard logging configuration, from appsettings.json in the working directory or the environment
        // (Logging__LogLevel__Pmpi=Debug, Logging__Console__FormatterName=json): levels per category and the console's
        // formatter, by default one line per event with a UTC timestamp.
        host.Logging.AddConfiguration(host.Configuration.GetSection("Logging"));
        string? formatter = host.Configuration["Logging:Console:FormatterName"];
        host.Logging.AddConsole();
        host.Services.Configure<SimpleConsoleFormatterOptions>(simple =>
        {
            simple.SingleLine = true;
            simple.UseUtcTimestamp = true;
            simple.TimestampFormat = "yyyy-MM-dd'T'HH:mm:ss.fff'Z' ";
        });
        host.Services.Configure<JsonConsoleFormatterOptions>(json =>
        {
            json.UseUtcTimestamp = true;
            json.TimestampFormat = "yyyy-MM-dd'T'HH:mm:ss.fff'Z'";
        });
        host.Services.Configure<ConsoleLoggerOptions>(console =>
        {
            console.FormatterName = formatter ?? ConsoleFormatterNames.Simple;
            // Stdout keeps only the listening line, which scripts and tests read.
            console.LogToStandardErrorThreshold = LogLevel.Trace;
        });
        host.Logging.AddFilter("Microsoft", LogLevel.Warning);
        // The Event Log takes only warnings by default; a Windows service has no other log of its events.
        if (OperatingSystem.IsWindows()) host.Logging.AddFilter<EventLogLoggerProvider>("Pmpi", LogLevel.Information);
        // The agent logs its own start and stop; the console lifetime's "Press Ctrl+C" lines would repeat them.
        host.Services.Configure<ConsoleLifetimeOptions>(lifetime => lifetime.SuppressStatusMessages = true);
        // Each replaces the console lifetime only when that manager started the process: sd_notify READY=1 and
        // journald priorities under systemd (after the console setup, whose formatter it overrides), the Service
        // Control Manager's protocol and the Event Log on Windows.
        host.Services.AddSystemd();
        host.Services.AddWindowsService();
    }
}
