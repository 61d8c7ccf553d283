using System.Collections.Concurrent;
using System.Diagnostics;
using Pmpi.Agent.Launching;
using Pmpi.Agent.Tests.NodeInfo;

namespace Pmpi.Agent.Tests.Launching;

public class RankProcessTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static RankStart Shell(string script, IReadOnlyDictionary<string, string>? environment = null) =>
        new(0, "/bin/sh", ["-c", script], Path.GetTempPath(), environment ?? new Dictionary<string, string>());

    private static ValueTask Collect<T>(ConcurrentQueue<T> queue, T item)
    {
        queue.Enqueue(item);
        return ValueTask.CompletedTask;
    }

    [LinuxFact]
    public async Task Start_ProgramWritesBothStreams_ForwardsEveryLineBeforeExit()
    {
        var lines = new ConcurrentQueue<(OutputStream, string)>();
        using var rank = RankProcess.Start(Shell("echo one; echo two >&2; echo \"$PMPI_TEST\"; exit 3", new Dictionary<string, string> { ["PMPI_TEST"] = "three" }),
            piece => Collect(lines, (piece.Stream, piece.Text)));

        int code = await rank.Exited.WaitAsync(Timeout);

        Assert.Equal(3, code);
        Assert.Contains((OutputStream.Stdout, "one"), lines);
        Assert.Contains((OutputStream.Stderr, "two"), lines);
        Assert.Contains((OutputStream.Stdout, "three"), lines);
    }

    [LinuxFact]
    public async Task Kill_ProcessWithChildren_LeavesNoDescendant()
    {
        var lines = new ConcurrentQueue<string>();
        using var rank = RankProcess.Start(Shell("sleep 60 & echo $!; wait"), piece => Collect(lines, piece.Text));
        var deadline = Stopwatch.StartNew();
        while (lines.IsEmpty && deadline.Elapsed < Timeout) await Task.Delay(20);
        int child = int.Parse(lines.Single(), System.Globalization.CultureInfo.InvariantCulture);

        rank.Kill();
        await rank.Exited.WaitAsync(Timeout);

        while (Directory.Exists($"/proc/{child}") && deadline.Elapsed < Timeout) await Task.Delay(20);
        Assert.False(Directory.Exists($"/proc/{child}"), $"child process {child} outlived the kill");
    }

    [LinuxFact]
    public async Task Start_WithInput_TheRankReadsItToItsEnd()
    {
        var lines = new ConcurrentQueue<string>();
        using var input = new MemoryStream("first\nsecond\n"u8.ToArray());
        using var rank = RankProcess.Start(Shell("cat; echo end") with { Input = input }, piece => Collect(lines, piece.Text));

        int code = await rank.Exited.WaitAsync(Timeout);

        Assert.Equal(0, code);
        Assert.Equal(["first", "second", "end"], lines);
    }

    [LinuxFact]
    public async Task Start_WithoutInput_TheRankReadsAnEmptyInput()
    {
        var lines = new ConcurrentQueue<string>();
        using var rank = RankProcess.Start(Shell("cat; echo end"), piece => Collect(lines, piece.Text));

        int code = await rank.Exited.WaitAsync(Timeout);

        Assert.Equal(0, code);
        Assert.Equal(["end"], lines);
    }

    [LinuxFact]
    public async Task Start_RankExitsWithoutReadingItsInput_ExitsAsIfItHadNone()
    {
        // An input that never ends, like a terminal nobody types into: the rank's exit must not wait for it.
        var lines = new ConcurrentQueue<string>();
        using var input = new BlockingStream();
        using var rank = RankProcess.Start(Shell("echo done") with { Input = input }, piece => Collect(lines, piece.Text));

        int code = await rank.Exited.WaitAsync(Timeout);

        Assert.Equal(0, code);
        Assert.Equal(["done"], lines);
    }

    [Fact]
    public void Start_MissingProgram_ThrowsNamingIt()
    {
        var start = new RankStart(4, "/nonexistent/rank-program", [], Path.GetTempPath(), new Dictionary<string, string>());

        var error = Assert.Throws<InvalidOperationException>(() => RankProcess.Start(start, _ => ValueTask.CompletedTask));

        Assert.Equal("rank 4's program '/nonexistent/rank-program' is not on this machine", error.Message);
    }

    [Fact]
    public void Start_MissingWorkingDirectory_ThrowsNamingIt()
    {
        var directory = Path.Combine(Path.GetTempPath(), $"pmpi-absent-{Guid.NewGuid():N}");
        var start = new RankStart(2, "echo", [], directory, new Dictionary<string, string>());

        var error = Assert.Throws<InvalidOperationException>(() => RankProcess.Start(start, _ => ValueTask.CompletedTask));

        Assert.Equal($"rank 2's working directory '{directory}' is not on this machine", error.Message);
    }

    [LinuxFact]
    public async Task Start_LineLongerThanCap_DeliveredInPiecesWithNothingLost()
    {
        // Arrange: 200,000 'x' and a newline, then a short line; the cap is 65,536 characters.
        var pieces = new ConcurrentQueue<OutputPiece>();
        using var rank = RankProcess.Start(Shell("head -c 200000 /dev/zero | tr '\\0' x; echo; echo after"), piece => Collect(pieces, piece));

        // Act
        await rank.Exited.WaitAsync(Timeout);

        // Assert
        var all = pieces.ToArray();
        Assert.Equal([65536, 65536, 65536, 3392, 5], all.Select(p => p.Text.Length));
        Assert.Equal([true, true, true, false, false], all.Select(p => p.Continues));
        Assert.All(all.Take(4), p => Assert.True(p.Text.All(c => c == 'x')));
        Assert.Equal("after", all[^1].Text);
    }

    [LinuxFact]
    public async Task Start_LongLineOfSurrogatePairs_NoPieceEndsInsideAPair()
    {
        // Arrange: "a" and 40,000 emoji (U+1F600, two UTF-16 chars each) on one line: the cut at 65,536 would fall
        // inside a pair.
        var pieces = new ConcurrentQueue<OutputPiece>();
        using var rank = RankProcess.Start(Shell("printf a; yes 😀 2>/dev/null | head -n 40000 | tr -d '\\n'; echo"),
            piece => Collect(pieces, piece));

        // Act
        await rank.Exited.WaitAsync(Timeout);

        // Assert
        var all = pieces.ToArray();
        Assert.True(all.Length >= 2, $"expected the 80,000-character line in pieces, got {all.Length}");
        Assert.All(all, p => Assert.False(p.Text.Length > 0 && char.IsHighSurrogate(p.Text[^1]), "a piece ends with half a surrogate pair"));
        Assert.Equal("a" + string.Concat(Enumerable.Repeat("😀", 40000)), string.Concat(all.Select(p => p.Text)));
        Assert.Equal(65535, all[0].Text.Length);
    }

    [LinuxFact]
    public async Task Start_ConsumerStalls_RankWaitsInItsWriteUntilReleased()
    {
        // Arrange: 10 MB of output, far more than a pipe holds; the consumer takes one piece and then stalls.
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int received = 0;
        using var rank = RankProcess.Start(Shell("head -c 10000000 /dev/zero | tr '\\0' x | fold -w 1000; echo; echo done"), async piece =>
        {
            if (Interlocked.Increment(ref received) == 1) await release.Task;
        });

        // Act: while stalled, the rank cannot finish writing.
        await Task.Delay(TimeSpan.FromSeconds(2));
        bool finishedWhileStalled = rank.Exited.IsCompleted;
        int receivedWhileStalled = Volatile.Read(ref received);
        release.SetResult();
        int code = await rank.Exited.WaitAsync(Timeout);

        // Assert
        Assert.False(finishedWhileStalled, "the rank finished although nobody took its output");
        Assert.Equal(1, receivedWhileStalled);
        Assert.Equal(0, code);
        Assert.Equal(10_001, Volatile.Read(ref received));
    }

    [LinuxFact]
    public async Task Unresponsive_RuntimeBeatsThenFallsSilent_CompletesWhileProcessRuns()
    {
        // Arrange: one heartbeat on the inherited pipe, then silence (like a rank stopped by SIGSTOP).
        var start = new RankStart(0, "/bin/bash", ["-c", "printf x >&$PMPI_HEARTBEAT; sleep 60"], Path.GetTempPath(), new Dictionary<string, string>())
        {
            HeartbeatTimeout = TimeSpan.FromSeconds(2),
        };
        using var rank = RankProcess.Start(start, _ => ValueTask.CompletedTask);

        // Act
        var silence = await rank.Unresponsive.WaitAsync(Timeout);

        // Assert
        Assert.True(silence > TimeSpan.FromSeconds(2), $"reported after {silence} of silence");
        Assert.False(rank.Exited.IsCompleted);
    }

    [LinuxFact]
    public async Task Unresponsive_RuntimeBeatsUntilExit_NeverCompletes()
    {
        // Arrange: a beat every half second for 4 s (twice the timeout), then a normal exit.
        var start = new RankStart(0, "/bin/bash", ["-c", "for i in $(seq 8); do printf x >&$PMPI_HEARTBEAT; sleep 0.5; done"], Path.GetTempPath(), new Dictionary<string, string>())
        {
            HeartbeatTimeout = TimeSpan.FromSeconds(2),
        };
        using var rank = RankProcess.Start(start, _ => ValueTask.CompletedTask);

        // Act
        int code = await rank.Exited.WaitAsync(Timeout);
        await Task.Delay(TimeSpan.FromSeconds(3));

        // Assert
        Assert.Equal(0, code);
        Assert.False(rank.Unresponsive.IsCompleted, "a rank that beat until it exited was reported unresponsive");
    }

    /// <summary>An input whose reads wait until it is disposed: standard input nobody writes to.</summary>
    private sealed class BlockingStream : Stream
    {
        private readonly ManualResetEventSlim _disposed = new();

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count)
        {
            _disposed.Wait();
            return 0;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            _disposed.Set();
            base.Dispose(disposing);
        }
    }
}
