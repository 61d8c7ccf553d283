using System.Diagnostics.Metrics;
using Pmpi.Rpc.Streams;

namespace Pmpi.Gateway.Tests;

/// <summary>
/// A gateway's meter (<see cref="GatewayCounters.MeterName"/>) as dotnet-counters or an OpenTelemetry exporter reads
/// it, through a MeterListener: what the two gateways of a pair relayed and refused, each tagged with its domain.
/// </summary>
public sealed class GatewayMetersTests
{
    [Fact]
    public async Task RelayedAndRefusedStreams_MeasuredPerGatewayDomain()
    {
        await using var pair = await GatewayPair.StartAsync();
        var (job, token) = pair.Job("meters-1");
        await pair.RegisterFromMasterInAAsync("meters-1", job);

        await pair.EchoFromRankZeroAsync("meters-1", token);
        var (_, _, refused) = await GatewayPair.OpenRelayAsync(pair.A, RelayPreamble.For("some key", "never-registered", 0, 1).ToBytes());
        refused.Dispose();

        // The relayed stream closes at each gateway a moment after the ranks' ends saw it close.
        var deadline = DateTime.UtcNow + GatewayPair.Timeout;
        Dictionary<(string Instrument, string Domain), long> measured;
        while ((measured = Measure(pair)).GetValueOrDefault(("pmpi.gateway.streams.open", "b"), -1) != 0 || measured.GetValueOrDefault(("pmpi.gateway.streams.open", "a"), -1) != 0)
        {
            Assert.True(DateTime.UtcNow < deadline, $"Streams still open: {string.Join(", ", measured)}");
            await Task.Delay(20);
        }
        foreach (var domain in new[] { "a", "b" })
        {
            Assert.Equal(1, measured[("pmpi.gateway.streams.relayed", domain)]);
            Assert.True(measured[("pmpi.gateway.bytes.relayed", domain)] >= 2 * 3 * (1 << 20), $"{domain}: {measured[("pmpi.gateway.bytes.relayed", domain)]} bytes");
        }
        Assert.Equal((1L, 0L), (measured[("pmpi.gateway.refusals", "a")], measured[("pmpi.gateway.refusals", "b")]));
        Assert.Equal((1L, 0L), (measured[("pmpi.gateway.control_calls.relayed", "a")], measured[("pmpi.gateway.control_calls.relayed", "b")]));
    }

    /// <summary>One reading of every instrument of the pair's gateways' meters, by instrument and domain (other tests' gateways run beside them).</summary>
    private static Dictionary<(string Instrument, string Domain), long> Measure(GatewayPair pair)
    {
        var measured = new Dictionary<(string, string), long>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter == pair.A.Counters.Meter || instrument.Meter == pair.B.Counters.Meter) listener.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
                if (tag.Key == "pmpi.domain") measured[(instrument.Name, (string)tag.Value!)] = value;
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return measured;
    }
}
