using System.Diagnostics.Metrics;
using Pmpi.Devices;

namespace Pmpi.Hosting;

/// <summary>
/// The ranks' meters, under the meter named <see cref="Name"/> (System.Diagnostics.Metrics): messages and payload
/// bytes each rank of this process sent, by link kind, and received. dotnet-counters shows them
/// (<c>dotnet-counters monitor -p PID --counters Pmpi</c>), and OpenTelemetry exports them from a program that adds
/// the meter (<c>.AddMeter("Pmpi")</c>). They observe counts the ranks keep anyway, so a rank pays nothing per
/// message for a listener that is not there.
/// </summary>
internal static class RankMeters
{
    /// <summary>The meter's name.</summary>
    public const string Name = "Pmpi";

    private const string RankTag = "pmpi.rank";
    private const string LinkTag = "pmpi.link";

    // Every rank runtime of the process (several for an in-process job), held weakly: a finished one goes with its job.
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<RankRuntime, object?> s_ranks = new();
    private static readonly Meter s_meter = CreateMeter(); // created with the first rank, so a listener sees the instruments from then on

    /// <summary>Adds <paramref name="runtime"/>'s traffic to the meters.</summary>
    public static void Track(RankRuntime runtime) => s_ranks.AddOrUpdate(runtime, null);

    private static Meter CreateMeter()
    {
        var meter = new Meter(Name, typeof(RankMeters).Assembly.GetName().Version?.ToString());
        meter.CreateObservableCounter("pmpi.messages.sent", () => Sent((traffic, kind) => traffic.MessagesSent(kind)), "{message}", "Messages the rank sent, by link kind");
        meter.CreateObservableCounter("pmpi.bytes.sent", () => Sent((traffic, kind) => traffic.BytesSent(kind)), "By", "Payload bytes the rank sent, by link kind");
        meter.CreateObservableCounter("pmpi.messages.received", () => Received(arrived => arrived.Messages), "{message}", "Messages that arrived for the rank");
        meter.CreateObservableCounter("pmpi.bytes.received", () => Received(arrived => arrived.Bytes), "By", "Payload bytes that arrived for the rank");
        return meter;
    }

    private static IEnumerable<Measurement<long>> Sent(Func<RankTraffic, LinkKind, long> count)
    {
        foreach (var (runtime, _) in s_ranks)
        {
            foreach (var kind in Enum.GetValues<LinkKind>())
            {
                long value = count(runtime.Traffic, kind);
                if (value > 0) yield return new(value, new(RankTag, runtime.Device.Rank), new(LinkTag, TagOf(kind)));
            }
        }
    }

    private static IEnumerable<Measurement<long>> Received(Func<(long Messages, long Bytes), long> count)
    {
        foreach (var (runtime, _) in s_ranks) yield return new(count(runtime.Device.Engine.Arrived), new KeyValuePair<string, object?>(RankTag, runtime.Device.Rank));
    }

    /// <summary>The link kind as the meters name it.</summary>
    private static string TagOf(LinkKind kind) => kind switch
    {
        LinkKind.Self => "self",
        LinkKind.InProcess => "in-process",
        LinkKind.SharedMemory => "shared-memory",
        LinkKind.Network => "network",
        LinkKind.Gateway => "gateway",
        _ => "unconnected",
    };
}
