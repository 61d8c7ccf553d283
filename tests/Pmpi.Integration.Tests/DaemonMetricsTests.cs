using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A daemon exports its meters over OTLP once a collector is named the standard OpenTelemetry way (here from the
/// environment, as a systemd unit's Environment= or a Kubernetes pod would set it).
/// </summary>
public sealed class DaemonMetricsTests
{
    private static readonly TimeSpan ExportTimeout = TimeSpan.FromSeconds(30);

    [LinuxFact]
    public async Task Gateway_OtlpEndpointConfigured_ExportsItsMetersTaggedWithItsDomain()
    {
        await using var collector = await OtlpCollector.StartAsync();

        await using var gateway = PmpiCli.Start(["gateway", "--domain", "campus-otel", "--bind", "127.0.0.1", "--port", "0"], new Dictionary<string, string?>
        {
            ["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.Address.ToString(),
            ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
            ["OTEL_METRIC_EXPORT_INTERVAL"] = "200",
        });
        await gateway.WaitForLineAsync(line => line.StartsWith("pmpi gateway listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "its listening line");

        await collector.WaitForExportHoldingAsync(ExportTimeout, "pmpi-gateway", "Pmpi.Gateway", "pmpi.gateway.streams.relayed",
            "pmpi.gateway.bytes.relayed", "pmpi.gateway.refusals", "pmpi.gateway.control_calls.relayed", "pmpi.domain", "campus-otel");
    }
}
