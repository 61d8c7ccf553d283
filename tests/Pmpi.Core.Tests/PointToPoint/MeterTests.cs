using System.Diagnostics.Metrics;

namespace Pmpi.Tests.PointToPoint;

/// <summary>
/// The ranks' meters (meter "Pmpi") count what each rank sent, by the kind of link that carried it, and what arrived
/// for it, read through a MeterListener while the job runs, as dotnet-counters and OpenTelemetry read them.
/// </summary>
public abstract class MeterTests(Device device) : DeviceSuite(device)
{
    private const int Messages = 37, Bytes = 12_345, SelfMessages = 3, SelfBytes = 1_111, ReplyBytes = 777;

    [Fact]
    public void Meters_DuringAJob_CountEachRanksMessagesAndBytesByLinkKind()
    {
        var measured = new List<(string Instrument, long Value, int Rank, string? Link)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == "Pmpi") listener.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            int rank = -1;
            string? link = null;
            foreach (var tag in tags)
            {
                if (tag.Key == "pmpi.rank") rank = (int)tag.Value!;
                if (tag.Key == "pmpi.link") link = (string)tag.Value!;
            }
            measured.Add((instrument.Name, value, rank, link));
        });
        listener.Start();

        // Act: rank 0 sends to rank 1 and to itself; rank 1 answers once all arrived; rank 0 reads the meters then, after
        // a full collection, while rank 1 still waits for a last message: the meters hold a rank weakly, and a rank
        // still in its job must be counted however the collector runs.
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                for (int i = 0; i < Messages; i++) world.Send(new byte[Bytes], 1, 5);
                for (int i = 0; i < SelfMessages; i++) world.Send(new byte[SelfBytes], 0, 6);
                for (int i = 0; i < SelfMessages; i++) world.Receive<byte[]>(0, 6);
                world.Receive<byte[]>(1, 7);
                GC.Collect();
                GC.WaitForPendingFinalizers();
                listener.RecordObservableInstruments();
                world.Send(Array.Empty<byte>(), 1, 8);
            }
            else
            {
                for (int i = 0; i < Messages; i++) world.Receive<byte[]>(0, 5);
                world.Send(new byte[ReplyBytes], 0, 7);
                world.Receive<byte[]>(0, 8);
            }
        });

        // Assert: among every rank runtime of this test process (other tests' jobs too), this job's counts.
        string kind = Device switch
        {
            Device.InProcess => "in-process",
            Device.SharedMemory => "shared-memory",
            _ => "network",
        };
        AssertMeasured(measured, "pmpi.messages.sent", Messages, rank: 0, kind);
        AssertMeasured(measured, "pmpi.bytes.sent", Messages * Bytes, rank: 0, kind);
        AssertMeasured(measured, "pmpi.messages.sent", SelfMessages, rank: 0, "self");
        AssertMeasured(measured, "pmpi.bytes.sent", SelfMessages * SelfBytes, rank: 0, "self");
        AssertMeasured(measured, "pmpi.bytes.sent", ReplyBytes, rank: 1, kind);
        AssertMeasured(measured, "pmpi.messages.received", Messages, rank: 1, link: null);
        AssertMeasured(measured, "pmpi.bytes.received", Messages * Bytes, rank: 1, link: null);
        AssertMeasured(measured, "pmpi.bytes.received", SelfMessages * SelfBytes + ReplyBytes, rank: 0, link: null);
    }

    private static void AssertMeasured(List<(string Instrument, long Value, int Rank, string? Link)> measured, string instrument, long value, int rank, string? link) =>
        Assert.True(measured.Contains((instrument, value, rank, link)),
            $"No {instrument} of {value} for rank {rank}{(link is null ? "" : $" over {link}")}; measured: {string.Join("; ", measured.Where(m => m.Instrument == instrument && m.Rank == rank).Select(m => $"{m.Value} {m.Link}"))}");
}
