using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Console;
using Microsoft.Extensions.Logging.EventLog;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using Pmpi.Agent.Hosting;
using Pmpi.Gateway;
using Pmpi.Rpc.Kestrel;

namespace Pmpi.Cli;

/// <summary>
/// Logging, metrics export and lifetime for a daemon, `pmpi agent` or `pmpi gateway` (the embedded agent of
/// `pmpi run` keeps the silent defaults), all from .NET's and OpenTelemetry's standard configuration.
/// </summary>
internal static class DaemonHosting
{
    /// <summary>The meters a daemon exports: its own, its refusals, and Kestrel's (connections, TLS handshakes).</summary>
    private static readonly string[] ExportedMeters = [AgentHost.MeterName, GatewayCounters.MeterName, KestrelGrpcExtensions.RefusalsMeterName, "Microsoft.AspNetCore.Server.Kestrel"];

    /// <summary>Configures the host of the daemon named <paramref name="service"/> (its OpenTelemetry service name unless OTEL_SERVICE_NAME says otherwise).</summary>
    public static Action<IHostApplicationBuilder> For(string service) => host =>
    {
        ConfigureLogging(host);
        // Metrics go to an operator's collector once one is named the standard way (OTEL_EXPORTER_OTLP_ENDPOINT, with
        // OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_METRIC_EXPORT_INTERVAL and the rest read by the exporter); without one,
        // nothing is collected or sent, and dotnet-counters still shows the meters.
        if (!string.IsNullOrEmpty(host.Configuration["OTEL_EXPORTER_OTLP_ENDPOINT"]))
        {
            host.Services.AddOpenTelemetry()
                .ConfigureResource(resource => resource.AddService(host.Configuration["OTEL_SERVICE_NAME"] is { Length: > 0 } named ? named : service))
                .WithMetrics(metrics => metrics.AddMeter(ExportedMeters).AddOtlpExporter());
        }
        // The agent logs its own start and stop; the console lifetime's "Press Ctrl+C" lines would repeat them.
        host.Services.Configure<ConsoleLifetimeOptions>(lifetime => lifetime.SuppressStatusMessages = true);
        // Each replaces the console lifetime only when that manager started the process: sd_notify READY=1 and
        // journald priorities under systemd (after the console setup, whose formatter it overrides), the Service
        // Control Manager's protocol and the Event Log on Windows.
        host.Services.AddSystemd();
        host.Services.AddWindowsService();
    };

    private static void ConfigureLogging(IHostApplicationBuilder host)
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
    }
}
