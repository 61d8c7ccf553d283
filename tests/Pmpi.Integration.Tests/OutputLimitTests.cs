using Grpc.Core;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;
using MasterClient = Pmpi.Rpc.V1.Master.MasterClient;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A rank's output never grows an agent's memory without bound: an endless line arrives in pieces, and a submitter
/// that stops reading makes the rank wait in its writes instead of the agent queueing what it wrote.
/// </summary>
public sealed class OutputLimitTests
{
    /// <summary>The bound on the agent's resident memory while it forwards a flood.</summary>
    private const long RssLimit = 300L * 1024 * 1024;

    private static readonly TimeSpan LongTimeout = TimeSpan.FromMinutes(4);

    [LinuxFact]
    public async Task Submit_RankWrites100MbLineWithoutNewline_DeliveredInPiecesAndAgentStaysUnder300Mb()
    {
        // Arrange
        const int Megabytes = 100;
        await using var agent = await AgentProcess.StartAsync("longline", slots: 1);
        await using var memory = new ResidentMemoryProbe(agent.Process.Id);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("longline.xml", Computation.Of("longline", 1, ["longline", $"{Megabytes}"], ("a", agent.Endpoint, 1)));
        using var channel = RpcChannels.For(agent.Address, TestCluster.Security);
        using var timeout = new CancellationTokenSource(LongTimeout);
        long characters = 0;
        int pieces = 0, continuing = 0;
        bool lastContinues = true, done = false;
        JobFinished? finished = null;

        // Act
        var request = new SubmitRequest { FileName = file, ComputationXml = File.ReadAllText(file) };
        await foreach (var item in new MasterClient(channel).Submit(request, cancellationToken: timeout.Token).ResponseStream.ReadAllAsync(timeout.Token))
        {
            if (item.Output is { IsError: false } output && !RankHello.Is($"[{output.Rank}] {output.Line}"))
            {
                characters += output.Line.Length;
                pieces++;
                if (output.Continues) continuing++;
                lastContinues = output.Continues;
                Assert.True(output.Line.Length <= 65_536, $"A piece of {output.Line.Length} characters exceeds the cap.");
            }
            if (item.Output is { IsError: true } error && error.Line.StartsWith("longline done", StringComparison.Ordinal)) done = true;
            if (item.Finished is { } end) finished = end;
        }

        // Assert
        Assert.NotNull(finished);
        Assert.True(finished.ExitCode == 0, $"The job failed: {finished.Summary}");
        Assert.True(done, "The rank never reported that it wrote the whole line.");
        Assert.Equal(Megabytes * 1024L * 1024, characters);
        Assert.Equal(pieces - 1, continuing);
        Assert.False(lastContinues, "The last piece claims the line goes on.");
        Assert.True(memory.PeakBytes < RssLimit, $"The agent's resident memory peaked at {memory.PeakMegabytes:F0} MB.");
    }

    [LinuxFact]
    public async Task Submit_SubmitterStopsReadingDuringAFlood_AgentStaysUnder300MbAndNothingIsLost()
    {
        // Arrange: 200 MB of 1 KB lines, which the agent would hold as 400 MB of strings if it queued them all.
        const int Megabytes = 200;
        await using var agent = await AgentProcess.StartAsync("flood", slots: 1);
        await using var memory = new ResidentMemoryProbe(agent.Process.Id);
        using var scratch = new ScratchDirectory();
        var file = scratch.Write("flood.xml", Computation.Of("flood", 1, ["flood", $"{Megabytes}"], ("a", agent.Endpoint, 1)));
        using var channel = RpcChannels.For(agent.Address, TestCluster.Security);
        using var timeout = new CancellationTokenSource(LongTimeout);
        var request = new SubmitRequest { FileName = file, ComputationXml = File.ReadAllText(file) };
        await using var events = new MasterClient(channel).Submit(request, cancellationToken: timeout.Token).ResponseStream.ReadAllAsync(timeout.Token)
            .GetAsyncEnumerator(timeout.Token);
        long lines = 0;
        bool done = false;
        JobFinished? finished = null;
        void Take(JobEvent item)
        {
            if (item.Output is { IsError: false } output && output.Line.Length == 1023) lines++;
            if (item.Output is { IsError: true } error && error.Line.StartsWith("flood done", StringComparison.Ordinal)) done = true;
            if (item.Finished is { } end) finished = end;
        }

        // Act: read until the flood has begun, then stop reading for 10 s.
        while (lines == 0 && await events.MoveNextAsync()) Take(events.Current);
        await Task.Delay(TimeSpan.FromSeconds(10));
        long peakWhileStalled = memory.PeakBytes;
        bool doneWhileStalled = done;
        while (await events.MoveNextAsync()) Take(events.Current);

        // Assert
        Assert.True(peakWhileStalled < RssLimit, $"The agent's resident memory reached {peakWhileStalled / (1024 * 1024)} MB while the submitter did not read.");
        Assert.False(doneWhileStalled, "The rank finished its flood while nobody read it: its output was queued somewhere.");
        Assert.NotNull(finished);
        Assert.True(finished.ExitCode == 0, $"The job failed: {finished.Summary}");
        Assert.True(done, "The rank never reported the end of its flood.");
        Assert.Equal(Megabytes * 1024L, lines);
        Assert.True(memory.PeakBytes < RssLimit, $"The agent's resident memory peaked at {memory.PeakMegabytes:F0} MB.");
    }
}
