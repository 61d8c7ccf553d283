using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;

namespace Pmpi.Rpc.Tests.Streams;

/// <summary>
/// PMPI's own HTTP/2 for rank streams (<see cref="GrpcStream"/>) against a raw peer that writes and reads the frames
/// byte for byte: where large payloads land, a peer that stalls inside a frame, a peer that pads its DATA frames.
/// </summary>
public sealed class GrpcStreamRawPeerTests
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;

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
}
