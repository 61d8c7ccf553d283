using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Streams;

/// <summary>
/// PMPI's own HTTP/2 for rank streams (<see cref="GrpcStream"/>, <see cref="GrpcStreamListener"/>) against .NET's
/// own HTTP/2 stacks, a real Kestrel server (gRPC for .NET) and a real Grpc.Net.Client (SocketsHttpHandler), and
/// against itself over h2c and TLS.
/// </summary>
public sealed class GrpcStreamTests
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;

    [Fact]
    public async Task Listener_GrpcNetClient_EchoesHelloFramesAndA4MBChunkThenEndsOk()
    {
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, RpcSecurity.Insecure);
        using var channel = RpcChannels.For(listener.Address);
        using var call = channel.CreateCallInvoker().AsyncDuplexStreamingCall(GrpcMethods.Connect, null, new CallOptions(deadline: DateTime.UtcNow + Timeout));

        foreach (var frame in Frames())
        {
            await call.RequestStream.WriteAsync(frame).WaitAsync(Timeout);
            Assert.True(await call.ResponseStream.MoveNext(CancellationToken.None).WaitAsync(Timeout));
            Assert.Equal(frame, call.ResponseStream.Current);
        }
        await call.RequestStream.CompleteAsync().WaitAsync(Timeout);

        Assert.False(await call.ResponseStream.MoveNext(CancellationToken.None).WaitAsync(Timeout));
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }

    [Fact]
    public async Task Dial_KestrelServer_EchoesHelloFramesAndA4MBChunkThenEndsOk()
    {
        await using var server = await TestServer.StartAsync().WaitAsync(Timeout);
        using var call = await GrpcStream.DialAsync(server.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var received = new Collector();
        call.Start(received);

        await PingPongAsync(call, received);
        call.Complete();

        Assert.Null(await received.Ended.WaitAsync(Timeout));
    }

    [Fact]
    public async Task Dial_Listener_OverTlsWithPinnedCertificatesBothWays_Echoes()
    {
        var (serverSecurity, dialing) = PinnedBothWays();
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, serverSecurity);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, dialing).WaitAsync(Timeout);
        var received = new Collector();
        call.Start(received);

        Assert.StartsWith("https://", listener.Address.ToString());
        await PingPongAsync(call, received);
        call.Complete();
        Assert.Null(await received.Ended.WaitAsync(Timeout));
    }

    [Fact]
    public async Task Dial_Listener_OverTls_AThreadThatPollsReadsMessagesItself()
    {
        var (serverSecurity, dialing) = PinnedBothWays();
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, serverSecurity);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, dialing).WaitAsync(Timeout);
        var received = new Collector();
        call.Start(received);
        using var stop = new CancellationTokenSource();
        var poller = new Thread(() =>
        {
            while (!stop.IsCancellationRequested) call.Poll();
        }) { IsBackground = true, Name = "poller" };

        poller.Start();
        try
        {
            // Small messages each in a record of their own, and a 4 MB one over many, read whole by whichever thread.
            await PingPongUntilPolledAsync(call, received);
        }
        finally
        {
            stop.Cancel();
            Assert.True(poller.Join(Timeout), "The polling thread did not stop.");
        }

        Assert.Contains("poller", received.Readers);
        call.Complete();
        Assert.Null(await received.Ended.WaitAsync(Timeout));
    }

    [Fact]
    public async Task PollAll_ThreeCallsOnConnectionsOfTheirOwn_AThreadPollingThemTogetherReadsEachOnesMessagesItself()
    {
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, RpcSecurity.Insecure);
        var calls = new List<GrpcStream>();
        try
        {
            var received = new List<Collector>();
            for (int i = 0; i < 3; i++)
            {
                calls.Add(await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout));
                received.Add(new Collector());
                calls[i].Start(received[i]);
            }

            await using (PollingThread.Start([.. calls]))
            {
                for (int i = 0; i < calls.Count; i++) await PingPongUntilPolledAsync(calls[i], received[i]);
            }

            foreach (var collector in received) Assert.Contains("poller", collector.Readers);
            foreach (var call in calls) call.Complete();
            foreach (var collector in received) Assert.Null(await collector.Ended.WaitAsync(Timeout));
        }
        finally
        {
            foreach (var call in calls) call.Dispose();
        }
    }

    [Fact]
    public async Task PollAll_OneOfTheCallsConnectionsClosed_TheOtherCallStillGetsEveryMessageAndPollingGoesOn()
    {
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, RpcSecurity.Insecure);
        using var closed = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        using var open = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var received = new Collector();
        closed.Start(new Collector());
        open.Start(received);

        await using (var poller = PollingThread.Start([closed, open]))
        {
            closed.Dispose();
            await PingPongAsync(open, received);
            Assert.True(poller.Polls > 0);
        }

        open.Complete();
        Assert.Null(await received.Ended.WaitAsync(Timeout));
    }

    /// <summary>
    /// A thread that calls <see cref="GrpcStream.PollAll"/> until disposed, as a rank's waiting thread does; disposing
    /// it rethrows whatever the polling threw.
    /// </summary>
    private sealed class PollingThread : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private readonly Thread _thread;
        private Exception? _error;
        private long _polls;

        private PollingThread(System.Collections.Immutable.ImmutableArray<GrpcStream> calls)
        {
            _thread = new Thread(() =>
            {
                try
                {
                    while (!_stop.IsCancellationRequested)
                    {
                        GrpcStream.PollAll(calls);
                        Interlocked.Increment(ref _polls);
                    }
                }
                catch (Exception e)
                {
                    _error = e;
                }
            }) { IsBackground = true, Name = "poller" };
        }

        public long Polls => Interlocked.Read(ref _polls);

        public static PollingThread Start(System.Collections.Immutable.ImmutableArray<GrpcStream> calls)
        {
            var poller = new PollingThread(calls);
            poller._thread.Start();
            return poller;
        }

        public ValueTask DisposeAsync()
        {
            _stop.Cancel();
            Assert.True(_thread.Join(Timeout), "The polling thread did not stop.");
            _stop.Dispose();
            if (_error is not null) throw new InvalidOperationException("Polling threw.", _error);
            return ValueTask.CompletedTask;
        }
    }

    [Fact]
    public async Task Dial_Listener_OverTlsWithAnUnpinnedClient_IsRefusedInTheHandshake()
    {
        var stranger = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out _);
        var serverSecurity = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out var serverPin);
        int admitted = 0;
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, (stream, first) =>
        {
            Interlocked.Increment(ref admitted);
            return Echo.Admit(stream, first);
        }, serverSecurity);

        // Under TLS 1.3 the client finishes its handshake before the server has judged its certificate, so the refusal
        // may come with the dial or with the call's first read.
        var error = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, stranger.DialingPinned(serverPin));
            var received = new Collector();
            call.Write(new Frame { Hello = new Hello { JobId = "j1" } });
            call.Start(received);
            throw await received.Ended ?? new RpcException(new Status(StatusCode.OK, "The call ended OK."));
        }).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
        Assert.Equal(0, admitted);
    }

    [Fact]
    public async Task Listener_BothEndsSending64MBAtOnce_EverythingArrivesWithoutDeadlock()
    {
        // Each end writes 64 messages of 1 MB while the other does the same: neither reader ever waits on a write,
        // so the window updates both writers need keep flowing.
        var serverSide = new Collector();
        GrpcStream? served = null;
        var admitted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, (stream, _) =>
        {
            served = stream;
            admitted.SetResult();
            return serverSide;
        }, RpcSecurity.Insecure);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var clientSide = new Collector();
        call.Write(new Frame { Hello = new Hello { JobId = "bulk" } });
        call.Start(clientSide);
        await admitted.Task.WaitAsync(Timeout);

        var block = RandomNumberGenerator.GetBytes(1 << 20);
        var fromClient = Task.Run(() => WriteMany(call, block));
        var fromServer = Task.Run(() => WriteMany(served!, block));
        await Task.WhenAll(fromClient, fromServer).WaitAsync(Timeout);
        call.Complete();
        await serverSide.Ended.WaitAsync(Timeout);
        served!.Complete();

        Assert.Null(await clientSide.Ended.WaitAsync(Timeout));
        Assert.Equal((64, 64), (serverSide.Messages.Count, clientSide.Messages.Count));
        Assert.All(serverSide.Messages.Concat(clientSide.Messages), message => Assert.True(message.AsSpan(4).SequenceEqual(block)));
        Assert.Equal(Enumerable.Range(0, 64), serverSide.Messages.Select(message => BitConverter.ToInt32(message)));

        static void WriteMany(GrpcStream stream, byte[] block)
        {
            for (int i = 0; i < 64; i++) stream.Write(BitConverter.GetBytes(i), block);
        }
    }

    [Fact]
    public async Task Dial_Listener_LargePayloadsAfterHeadsOfManyLengths_ArriveByteForByte()
    {
        // A large payload's first bytes are gathered with the frame's head up to a page boundary of the write, and
        // the rest written from where it is: heads that leave the gathered write 14 bytes long, one byte short of a
        // page, on a page, and exactly as long as the write buffer; payloads either side of where that begins.
        int[] headLengths = [0, 1, 21, 4081, 4082, 65522];
        int[] payloadLengths = [(32 << 10) + 1, (64 << 10) - 1, (64 << 10) + 1, (1 << 20) + 7];
        var messages = new List<(string, byte[], ReadOnlyMemory<byte>)>();
        foreach (int headLength in headLengths)
        {
            foreach (int payloadLength in payloadLengths)
            {
                messages.Add(($"message {messages.Count}", RandomNumberGenerator.GetBytes(headLength), RandomNumberGenerator.GetBytes(payloadLength)));
            }
        }

        await AssertArriveByteForByteAsync(messages);
    }

    [Fact]
    public async Task Dial_Listener_LargePayloadsAfterEveryKindOfShiftPadding_ArriveByteForByte()
    {
        // A frame with a large payload follows as many bytes of empty padded DATA frames as put the payload half a
        // page from its own offset in a page: payloads placed (in a pinned array, so their addresses hold) to need no
        // padding, one frame's worth and either side of it, two frames' worth, and the most: a whole page more than
        // the 1–9 bytes no padding frame is short enough for.
        const int headLength = 21, before = Http2Frame.HeaderSize + 5 + headLength, payloadLength = (64 << 10) + 1;
        int[] paddings = [0, 1, 9, 10, 11, 264, 265, 266, 270, 274, 275, 276, 529, 530, 531, 4095];
        var block = GC.AllocateArray<byte>(payloadLength + 4096, pinned: true);
        RandomNumberGenerator.Fill(block);
        long address = Marshal.UnsafeAddrOfPinnedArrayElement(block, 0).ToInt64();
        var head = RandomNumberGenerator.GetBytes(headLength);

        await AssertArriveByteForByteAsync(paddings.Select((padding, i) =>
            ($"message {i} (padding {padding})", head, (ReadOnlyMemory<byte>)block.AsMemory((int)((padding + before + 2048 - address) & 4095), payloadLength))).ToList());
    }

    /// <summary>
    /// Dials a listener on loopback, writes each message's head and payload on the call, and asserts that the listener's
    /// side received each one, head then payload, byte for byte.
    /// </summary>
    private static async Task AssertArriveByteForByteAsync(List<(string Name, byte[] Head, ReadOnlyMemory<byte> Payload)> messages)
    {
        var served = new TaskCompletionSource<GrpcStream>(TaskCreationOptions.RunContinuationsAsynchronously);
        var serverSide = new Collector();
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, (stream, _) =>
        {
            served.SetResult(stream);
            return serverSide;
        }, RpcSecurity.Insecure);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        call.Write(new Frame { Hello = new Hello { JobId = "byte-for-byte" } }); // read before the call is admitted: small
        call.Start(new Collector());

        foreach (var (_, head, payload) in messages) call.Write(head, payload.Span);
        await serverSide.WaitForAsync(messages.Count).WaitAsync(Timeout);

        Assert.Equal(messages.Count, serverSide.Messages.Count);
        for (int i = 0; i < messages.Count; i++)
        {
            var (name, head, payload) = messages[i];
            Assert.True(serverSide.Messages[i].AsSpan().SequenceEqual([.. head, .. payload.Span]), $"{name} differs");
        }
        call.Complete();
        (await served.Task.WaitAsync(Timeout)).Complete();
    }

    [Fact]
    public async Task Dial_LargePayloads_AreWrittenAfterPaddingThatPutsThemHalfAPageFromTheirOffset()
    {
        // Arrange: a raw HTTP/2 server that allows frames and windows of 16 MB; payloads at four offsets in a pinned
        // array, and one under 64 KB, which goes unpadded.
        using var raw = await DialRawPeerAsync();
        var (call, peer) = (raw.Call, raw.Peer);
        const int large = 16 << 20;
        byte[] settings = [0, (byte)Http2Setting.MaxFrameSize, .. BigEndian(large - 1), 0, (byte)Http2Setting.InitialWindowSize, .. BigEndian(large)];
        byte[] connectionWindow = new byte[Http2Frame.HeaderSize + 4];
        Http2Frame.WriteHeader(connectionWindow, 4, Http2FrameType.WindowUpdate, 0, 0);
        BigEndian(large).CopyTo(connectionWindow, Http2Frame.HeaderSize);
        byte[] opening = [.. RawFrame(Http2FrameType.Settings, 0, settings), .. connectionWindow];
        await peer.SendAsync(opening).WaitAsync(Timeout);
        call.Start(new Collector()); // reads the settings
        var block = GC.AllocateArray<byte>((1 << 20) + 4096, pinned: true);
        RandomNumberGenerator.Fill(block);
        long address = Marshal.UnsafeAddrOfPinnedArrayElement(block, 0).ToInt64();
        var head = RandomNumberGenerator.GetBytes(7);
        (int Offset, int Length)[] payloads = [(0, 1 << 20), (8, 64 << 10), (2048, (64 << 10) + 3), (4000, 300 << 10), (5, (64 << 10) - 1)];
        var wire = new List<byte>();
        var buffer = new byte[1 << 16];
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (!RawFrames(wire).Any(frame => frame.Type == Http2FrameType.Settings && (frame.Flags & Http2Frame.Ack) != 0) && waited.Elapsed < Timeout)
        {
            wire.AddRange(buffer.AsSpan(0, await peer.ReceiveAsync(buffer).WaitAsync(Timeout)));
        }

        // Act: the call writes the messages from another thread; this one reads what arrives.
        var writing = Task.Run(() =>
        {
            foreach (var (offset, length) in payloads) call.Write(head, block.AsSpan(offset, length));
        });
        while ((!writing.IsCompleted || peer.Available > 0) && waited.Elapsed < Timeout)
        {
            if (peer.Available == 0)
            {
                await Task.WhenAny(writing, Task.Delay(10));
                continue;
            }
            wire.AddRange(buffer.AsSpan(0, await peer.ReceiveAsync(buffer).WaitAsync(Timeout)));
        }
        await writing.WaitAsync(Timeout);

        // Assert: each message's DATA frame follows padding frames (and the padding only) that, with its header, prefix
        // and head, put the payload half a page from its offset in its page; under 64 KB, none.
        var bytes = wire.ToArray();
        int message = 0, paddingBefore = 0;
        foreach (var (type, flags, at, length) in RawFrames(wire).Where(frame => frame.Type == Http2FrameType.Data))
        {
            var content = bytes.AsSpan(at, length);
            if ((flags & Http2Frame.Padded) != 0)
            {
                Assert.Equal(length - 1, content[0]); // padding and nothing else
                paddingBefore += Http2Frame.HeaderSize + length;
                continue;
            }
            var (offset, payloadLength) = payloads[message];
            Assert.True(content[(5 + head.Length)..].SequenceEqual(block.AsSpan(offset, payloadLength)), $"message {message}'s payload differs");
            long landsAt = (paddingBefore + Http2Frame.HeaderSize + 5 + head.Length) & 4095;
            Assert.Equal(payloadLength >= 64 << 10 ? (address + offset - 2048) & 4095 : Http2Frame.HeaderSize + 5 + head.Length, landsAt);
            Assert.InRange(paddingBefore, 0, 4096 + 9);
            message++;
            paddingBefore = 0;
        }
        Assert.Equal(payloads.Length, message);
    }

    /// <summary>The frames a raw peer has read so far (after the client's preface): type, flags, where the payload starts, its length.</summary>
    private static List<(Http2FrameType Type, byte Flags, int At, int Length)> RawFrames(List<byte> wire)
    {
        var frames = new List<(Http2FrameType, byte, int, int)>();
        for (int at = Http2Frame.Preface.Length; at + Http2Frame.HeaderSize <= wire.Count;)
        {
            int length = (wire[at] << 16) | (wire[at + 1] << 8) | wire[at + 2];
            if (at + Http2Frame.HeaderSize + length > wire.Count) break;
            frames.Add(((Http2FrameType)wire[at + 3], wire[at + 4], at + Http2Frame.HeaderSize, length));
            at += Http2Frame.HeaderSize + length;
        }
        return frames;
    }

    private static byte[] BigEndian(int value)
    {
        var bytes = new byte[4];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(bytes, value);
        return bytes;
    }

    [Fact]
    public async Task Listener_RefusesACall_TheCallerGetsTheStatusAndDetail()
    {
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect,
            (_, _) => throw new RpcException(new Status(StatusCode.PermissionDenied, "wrong job key for 'j1' (100% sure, é)")), RpcSecurity.Insecure);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var received = new Collector();
        call.Write(new Frame { Hello = new Hello { JobId = "j1" } });
        call.Start(received);

        var error = await received.Ended.WaitAsync(Timeout);

        Assert.Equal((StatusCode.PermissionDenied, "wrong job key for 'j1' (100% sure, é)"), (error!.StatusCode, error.Status.Detail));
        Assert.Empty(received.Messages);
    }

    [Fact]
    public async Task Listener_Closed_TheCallFailsUnavailable()
    {
        var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, RpcSecurity.Insecure);
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        var received = new Collector();
        call.Write(new Frame { Hello = new Hello { JobId = "j1" } });
        call.Start(received);
        await received.First.WaitAsync(Timeout);

        listener.Dispose();

        Assert.Equal(StatusCode.Unavailable, (await received.Ended.WaitAsync(Timeout))!.StatusCode);
        Assert.Throws<RpcException>(() => { call.Write(new Frame { Hello = new Hello() }); });
    }

    [LinuxFact]
    public async Task Dial_Listener_OverH2c_BothEndsSocketsStayBlocking()
    {
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, RpcSecurity.Insecure);
        await AssertBlockingEndsAsync(listener, RpcSecurity.Insecure);
    }

    [LinuxFact]
    public async Task Dial_Listener_OverTls_BothEndsSocketsStayBlocking()
    {
        var (serverSecurity, dialing) = PinnedBothWays();
        using var listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Echo.Admit, serverSecurity);
        await AssertBlockingEndsAsync(listener, dialing);
    }

    /// <summary>
    /// Dials <paramref name="listener"/>, echoes the frames, and checks that neither end's socket went non-blocking
    /// (O_NONBLOCK in /proc/self/fdinfo): .NET would then run each waiting read and write through its epoll thread
    /// and the thread pool (Streams/BlockingHandshake).
    /// </summary>
    private static async Task AssertBlockingEndsAsync(GrpcStreamListener listener, RpcSecurity dialing)
    {
        using var call = await GrpcStream.DialAsync(listener.Address, ServicePaths.Connect, dialing).WaitAsync(Timeout);
        var received = new Collector();
        call.Start(received);
        await PingPongAsync(call, received);

        var ends = EstablishedSocketFlags(listener.Address.Port);
        Assert.Equal(2, ends.Count);
        Assert.All(ends, flags => Assert.True((flags & NonBlocking) == 0, $"A connection's socket has flags {Convert.ToString(flags, 8)}: O_NONBLOCK is set."));
        call.Complete();
        Assert.Null(await received.Ended.WaitAsync(Timeout));
    }

    /// <summary>A rank endpoint's security that admits only the dialer's certificate, and the dialer's, pinning the endpoint's.</summary>
    private static (RpcSecurity Server, RpcSecurity Dialing) PinnedBothWays()
    {
        var client = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out var clientPin);
        var server = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(pin => pin == Convert.ToHexString(clientPin)), out var serverPin);
        return (server, client.DialingPinned(serverPin));
    }

    private const int NonBlocking = 0x800; // O_NONBLOCK on Linux

    /// <summary>The open-file flags of this process's established TCP sockets from or to <paramref name="port"/>.</summary>
    private static List<int> EstablishedSocketFlags(int port)
    {
        string hexPort = $":{port:X4}";
        var inodes = new[] { "/proc/net/tcp", "/proc/net/tcp6" }.SelectMany(File.ReadLines).Skip(1)
            .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(fields => fields.Length > 9 && fields[3] == "01" && (fields[1].EndsWith(hexPort, StringComparison.Ordinal) || fields[2].EndsWith(hexPort, StringComparison.Ordinal)))
            .Select(fields => $"socket:[{fields[9]}]").ToHashSet();
        return [.. Directory.EnumerateFileSystemEntries("/proc/self/fd")
            .Where(fd => inodes.Contains(new FileInfo(fd).LinkTarget ?? ""))
            .Select(fd => File.ReadLines($"/proc/self/fdinfo/{Path.GetFileName(fd)}").First(line => line.StartsWith("flags:", StringComparison.Ordinal)))
            .Select(line => Convert.ToInt32(line["flags:".Length..].Trim(), 8))];
    }

    [Fact]
    public async Task Dial_PeerStallsInsideALargeFrame_TheReadingThreadSaysSoUntilTheRestArrives()
    {
        // Arrange: a raw HTTP/2 server that answers the call with one DATA frame of a 1 MB message, and sends the
        // first 100 KB of it only.
        using var raw = await DialRawPeerAsync();
        var (call, peer) = (raw.Call, raw.Peer);
        var message = RandomNumberGenerator.GetBytes(1 << 20);
        byte[] head = [.. ResponseStart(), .. DataFrameHead(message.Length)];
        int first = 100 * 1024;
        await peer.SendAsync(head.Concat(message[..first]).ToArray()).WaitAsync(Timeout);
        var received = new Collector();

        // Act
        call.Start(received);
        var stalled = await EventuallyAsync(() => call.ReadingLargePiece);
        await peer.SendAsync(message[first..]).WaitAsync(Timeout);
        await received.WaitForAsync(1).WaitAsync(Timeout);

        // Assert
        Assert.True(stalled, "No thread said it was reading the rest of the frame while the peer held it back.");
        Assert.Equal(message, received.Messages[0]);
        Assert.False(call.ReadingLargePiece);
    }

    [Fact]
    public async Task Dial_PeerPadsItsDataFrames_TheMessagesArriveWithoutThePadding()
    {
        // Arrange: a raw HTTP/2 server that answers the call with two gRPC messages, each in a DATA frame with the
        // PADDED flag (RFC 9113 §6.1: a pad-length byte first, that many bytes of padding after the data).
        using var raw = await DialRawPeerAsync();
        var (call, peer) = (raw.Call, raw.Peer);
        var first = RandomNumberGenerator.GetBytes(100);
        var second = RandomNumberGenerator.GetBytes(300);
        byte[] frames = [.. ResponseStart(), .. PaddedDataFrame(first, padding: 37), .. PaddedDataFrame(second, padding: 255)];
        await peer.SendAsync(frames).WaitAsync(Timeout);
        var received = new Collector();

        // Act
        call.Start(received);
        await received.WaitForAsync(2).WaitAsync(Timeout);

        // Assert
        Assert.Equal(first, received.Messages[0]);
        Assert.Equal(second, received.Messages[1]);
    }

    /// <summary>A padded DATA frame on stream 1 holding one gRPC message, then <paramref name="padding"/> bytes of padding.</summary>
    private static byte[] PaddedDataFrame(byte[] message, byte padding)
    {
        var payload = new byte[1 + 5 + message.Length + padding];
        payload[0] = padding;
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(payload.AsSpan(2), message.Length);
        message.CopyTo(payload, 6);
        payload.AsSpan(6 + message.Length).Fill(0xAA); // padding the reader must skip, not take for the next message
        return RawFrame(Http2FrameType.Data, Http2Frame.Padded, payload);
    }

    /// <summary>A call dialled to a raw HTTP/2 server on loopback, and the server's end of its connection, which the test writes frames on.</summary>
    private sealed record RawPeer(GrpcStream Call, Socket Peer) : IDisposable
    {
        public void Dispose()
        {
            Call.Dispose();
            Peer.Dispose();
        }
    }

    private static async Task<RawPeer> DialRawPeerAsync()
    {
        using var server = new Socket(SocketType.Stream, ProtocolType.Tcp);
        server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        server.Listen();
        var address = new Uri($"http://127.0.0.1:{((IPEndPoint)server.LocalEndPoint!).Port}");
        var accepting = server.AcceptAsync();
        var call = await GrpcStream.DialAsync(address, ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
        try
        {
            return new RawPeer(call, await accepting.WaitAsync(Timeout));
        }
        catch
        {
            call.Dispose();
            throw;
        }
    }

    /// <summary>The server's settings and the call's response headers, which come before its first DATA frame.</summary>
    private static byte[] ResponseStart() => [.. RawFrame(Http2FrameType.Settings, 0, []), .. RawFrame(Http2FrameType.Headers, Http2Frame.EndHeaders, ResponseHeaders())];

    private static async Task<bool> EventuallyAsync(Func<bool> condition)
    {
        for (var waited = System.Diagnostics.Stopwatch.StartNew(); waited.Elapsed < Timeout; await Task.Delay(10))
        {
            if (condition()) return true;
        }
        return false;
    }

    private static byte[] RawFrame(Http2FrameType type, byte flags, byte[] payload)
    {
        var frame = new byte[Http2Frame.HeaderSize + payload.Length];
        Http2Frame.WriteHeader(frame, payload.Length, type, flags, type == Http2FrameType.Settings ? 0 : 1);
        payload.CopyTo(frame, Http2Frame.HeaderSize);
        return frame;
    }

    private static byte[] ResponseHeaders()
    {
        var block = new List<byte>();
        HpackEncoder.Write(block, ":status", "200");
        HpackEncoder.Write(block, "content-type", "application/grpc");
        return [.. block];
    }

    /// <summary>A DATA frame's header on stream 1 for one gRPC message of <paramref name="length"/> bytes, with the message's 5-byte prefix.</summary>
    private static byte[] DataFrameHead(int length)
    {
        var head = new byte[Http2Frame.HeaderSize + 5];
        Http2Frame.WriteHeader(head, 5 + length, Http2FrameType.Data, 0, 1);
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(head.AsSpan(Http2Frame.HeaderSize + 1), length);
        return head;
    }

    private static IEnumerable<Frame> Frames()
    {
        yield return new Frame { Hello = new Hello { JobId = "job", JobToken = "secret", SourceWorldRank = 1 } };
        for (int i = 1; i <= 200; i++)
            yield return new Frame { Data = new Data { Context = 0, Source = 1, Tag = 7, Sequence = (ulong)i, TypeCode = 3, TotalLength = 8, Payload = ByteString.CopyFrom(BitConverter.GetBytes((long)i)) } };
        yield return new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(RandomNumberGenerator.GetBytes(4 << 20)) } };
    }

    /// <summary>
    /// Ping-pongs until the polling thread has read a message of the call itself, for at most <see cref="Timeout"/>:
    /// on a loaded machine the connection's own reader may get to every message of a round first.
    /// </summary>
    private static async Task PingPongUntilPolledAsync(GrpcStream call, Collector received)
    {
        var deadline = DateTime.UtcNow + Timeout;
        do await PingPongAsync(call, received);
        while (!received.Readers.Contains("poller") && DateTime.UtcNow < deadline);
    }

    private static async Task PingPongAsync(GrpcStream call, Collector received)
    {
        int count = received.Messages.Count;
        foreach (var frame in Frames())
        {
            call.Write(frame);
            count++;
            await received.WaitForAsync(count).WaitAsync(Timeout);
            Assert.Equal(frame, Frame.Parser.ParseFrom(received.Messages[count - 1]));
        }
    }

    /// <summary>Keeps what a stream receives (copied: the bytes are the connection's only during the call).</summary>
    private sealed class Collector : IGrpcStreamReceiver
    {
        private readonly TaskCompletionSource<RpcException?> _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _first = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly SemaphoreSlim _arrived = new(0);

        public List<byte[]> Messages { get; } = [];

        /// <summary>The name of the thread each message was delivered on.</summary>
        public List<string?> Readers { get; } = [];

        public Task<RpcException?> Ended => _ended.Task;

        public Task First => _first.Task;

        public void OnMessage(ReadOnlySequence<byte> message)
        {
            lock (Messages)
            {
                Messages.Add(message.ToArray());
                Readers.Add(Thread.CurrentThread.Name);
            }
            _first.TrySetResult();
            _arrived.Release();
        }

        public void OnEnd(RpcException? error) => _ended.TrySetResult(error);

        public async Task WaitForAsync(int count)
        {
            while (true)
            {
                lock (Messages)
                    if (Messages.Count >= count) return;
                await _arrived.WaitAsync();
            }
        }
    }

    /// <summary>Admits every call and echoes each message from a task of its own (a receiver must not block on a write), then ends OK after the caller does.</summary>
    private sealed class Echo(GrpcStream stream) : IGrpcStreamReceiver
    {
        private readonly BlockingCollection<byte[]> _outgoing = [];

        public static IGrpcStreamReceiver Admit(GrpcStream stream, ReadOnlySequence<byte> first)
        {
            var echo = new Echo(stream);
            echo.OnMessage(first);
            _ = Task.Run(echo.Pump);
            return echo;
        }

        public void OnMessage(ReadOnlySequence<byte> message) => _outgoing.Add(message.ToArray());

        public void OnEnd(RpcException? error) => _outgoing.CompleteAdding();

        private void Pump()
        {
            try
            {
                foreach (var message in _outgoing.GetConsumingEnumerable()) stream.Write(message, []);
                stream.Complete();
            }
            catch (RpcException)
            {
                // The caller went away.
            }
        }
    }
}
