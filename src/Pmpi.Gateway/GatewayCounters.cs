using System.Diagnostics.Metrics;

namespace Pmpi.Gateway;

/// <summary>
/// What a gateway has relayed since it started; thread-safe, read by <c>Gateway.GetStatus</c> and observed by the
/// meter named <see cref="MeterName"/> (dotnet-counters, and OpenTelemetry where the daemon exports it), each
/// measurement tagged with the gateway's domain.
/// </summary>
public sealed class GatewayCounters
{
    /// <summary>The gateway's meter (System.Diagnostics.Metrics).</summary>
    public const string MeterName = "Pmpi.Gateway";

    private long _streamsOpen, _streamsRelayed, _bytesRelayed, _streamsRefused, _controlCallsRelayed;

    /// <summary>Counters whose instruments live as long as <paramref name="meters"/>, the host's.</summary>
    /// <param name="meters">The host's meter factory.</param>
    /// <param name="options">The gateway's options: its domain tags every measurement.</param>
    public GatewayCounters(IMeterFactory meters, GatewayOptions options)
    {
        ArgumentNullException.ThrowIfNull(meters);
        ArgumentNullException.ThrowIfNull(options);
        var meter = Meter = meters.Create(MeterName, typeof(GatewayCounters).Assembly.GetName().Version?.ToString());
        var domain = new KeyValuePair<string, object?>("pmpi.domain", options.Domain);
        meter.CreateObservableUpDownCounter("pmpi.gateway.streams.open", () => new Measurement<long>(StreamsOpen, domain), "{stream}", "Rank streams being relayed now");
        meter.CreateObservableCounter("pmpi.gateway.streams.relayed", () => new Measurement<long>(StreamsRelayed, domain), "{stream}", "Rank streams relayed since start");
        meter.CreateObservableCounter("pmpi.gateway.bytes.relayed", () => new Measurement<long>(BytesRelayed, domain), "By", "Bytes of the relayed streams, both directions");
        meter.CreateObservableCounter("pmpi.gateway.refusals", () => new Measurement<long>(StreamsRefused, domain), "{refusal}", "Streams and control calls refused before anything was forwarded");
        meter.CreateObservableCounter("pmpi.gateway.control_calls.relayed", () => new Measurement<long>(ControlCallsRelayed, domain), "{call}", "Control calls relayed since start");
    }

    /// <summary>This gateway's meter (one process may run several gateways, each on a host of its own).</summary>
    internal Meter Meter { get; }

    /// <summary>Rank streams being relayed now.</summary>
    public long StreamsOpen => Interlocked.Read(ref _streamsOpen);

    /// <summary>Rank streams relayed since start (the open ones included).</summary>
    public long StreamsRelayed => Interlocked.Read(ref _streamsRelayed);

    /// <summary>Bytes of the relayed streams, both directions.</summary>
    public long BytesRelayed => Interlocked.Read(ref _bytesRelayed);

    /// <summary>Streams and control calls refused before anything was forwarded.</summary>
    public long StreamsRefused => Interlocked.Read(ref _streamsRefused);

    /// <summary>Control calls relayed since start: launches and kills, registrations with gateways, ranks' calls to their master.</summary>
    public long ControlCallsRelayed => Interlocked.Read(ref _controlCallsRelayed);

    internal void StreamOpened()
    {
        Interlocked.Increment(ref _streamsOpen);
        Interlocked.Increment(ref _streamsRelayed);
    }

    internal void StreamClosed() => Interlocked.Decrement(ref _streamsOpen);

    internal void Relayed(int bytes) => Interlocked.Add(ref _bytesRelayed, bytes);

    internal void Refused() => Interlocked.Increment(ref _streamsRefused);

    internal void ControlCallRelayed() => Interlocked.Increment(ref _controlCallsRelayed);
}
