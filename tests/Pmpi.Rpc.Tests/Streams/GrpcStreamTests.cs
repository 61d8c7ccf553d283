using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
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
