using System.Net;
using System.Net.Sockets;
using Pmpi.Rpc.Streams;

namespace Pmpi.Rpc.Tests.Streams;

/// <summary>
/// The stream under a connection's SslStream hands out one TLS record at a time and says when a whole one has
/// arrived, over a real TCP connection on loopback. The records here are only framed, as the stream only frames.
/// </summary>
public sealed class TlsRecordStreamTests
{
    [Fact]
    public void Read_TwoRecordsArrived_HandsOutOneRecordPerRead()
    {
        using var pair = SocketPair.Open();
        using var records = new TlsRecordStream(pair.Receiving);
        byte[] first = Record(300, fill: 1), second = Record(20, fill: 2);
        pair.Sending.Send([.. first, .. second]);
        WaitUntil(() => records.HasWholeRecord(SocketBytes.Unknown));

        var buffer = new byte[64 * 1024];
        Assert.Equal(first.Length, ReadRecord(records, buffer));
        Assert.Equal(first, buffer[..first.Length]);
        Assert.Equal(second.Length, records.Buffered);
        Assert.True(records.HasWholeRecord(SocketBytes.Unknown));
        Assert.Equal(second.Length, ReadRecord(records, buffer));
        Assert.Equal(second, buffer[..second.Length]);
        Assert.False(records.HasWholeRecord(SocketBytes.Unknown));
    }

    [Fact]
    public void HasWholeRecord_HalfARecordArrived_FalseUntilTheRestDoes()
    {
        using var pair = SocketPair.Open();
        using var records = new TlsRecordStream(pair.Receiving);
        var record = Record(16 * 1024 + 256, fill: 3);

        pair.Sending.Send(record[..3]); // not even a header
        WaitUntil(() => records.Buffered == 3 || records.HasWholeRecord(SocketBytes.Unknown));
        Assert.False(records.HasWholeRecord(SocketBytes.Unknown));
        pair.Sending.Send(record[3..1000]);
        WaitUntil(() => records.Buffered == 1000 || records.HasWholeRecord(SocketBytes.Unknown));
        Assert.False(records.HasWholeRecord(SocketBytes.Unknown));
        pair.Sending.Send(record[1000..]);
        WaitUntil(() => records.HasWholeRecord(SocketBytes.Unknown));

        var buffer = new byte[64 * 1024];
        Assert.Equal(record.Length, ReadRecord(records, buffer));
        Assert.Equal(record, buffer[..record.Length]);
    }

    [Fact]
    public void Read_PeerClosesInsideARecord_HandsOutWhatCameThenTheEnd()
    {
        using var pair = SocketPair.Open();
        using var records = new TlsRecordStream(pair.Receiving);
        var record = Record(100, fill: 4);
        pair.Sending.Send(record[..50]);
        pair.Sending.Shutdown(SocketShutdown.Send);

        var buffer = new byte[1024];
        int read = 0, last;
        while ((last = records.Read(buffer.AsSpan(read))) > 0) read += last;
        Assert.Equal(50, read);
        Assert.Equal(record[..50], buffer[..50]);
    }

    [Fact]
    public void HasWholeRecord_AsTheCallerKnowsTheSocket_AsksTakesOrLeavesIt()
    {
        using var pair = SocketPair.Open();
        using var records = new TlsRecordStream(pair.Receiving);
        var record = Record(40, fill: 5);
        pair.Sending.Send(record);
        WaitUntil(() => pair.Receiving.Available == record.Length);

        // Unasked: the socket is left to the next poll, so a record that is only there has not arrived yet.
        Assert.False(records.HasWholeRecord(SocketBytes.Unasked));
        Assert.Equal(0, records.SocketReads);
        // Waiting: the caller saw the bytes; they are read without asking, and the record is whole.
        Assert.True(records.HasWholeRecord(SocketBytes.Waiting));
        Assert.Equal(1, records.SocketReads);
        Assert.Equal(record.Length, records.Buffered);
        // A record already buffered is whole whatever the socket holds.
        Assert.True(records.HasWholeRecord(SocketBytes.Unasked));
        Assert.Equal(1, records.SocketReads);
    }

    /// <summary>A record of type application_data, TLS 1.2's version on the wire, and <paramref name="length"/> bytes.</summary>
    private static byte[] Record(int length, byte fill)
    {
        var record = new byte[5 + length];
        record[0] = 23;
        record[1] = 3;
        record[2] = 3;
        record[3] = (byte)(length >> 8);
        record[4] = (byte)length;
        record.AsSpan(5).Fill(fill);
        return record;
    }

    /// <summary>Reads one record by as many reads as it takes; each read ends at or before the record's end.</summary>
    private static int ReadRecord(TlsRecordStream records, byte[] buffer)
    {
        int read = records.Read(buffer);
        int length = 5 + (buffer[3] << 8 | buffer[4]);
        while (read < length) read += records.Read(buffer.AsSpan(read));
        Assert.Equal(length, read);
        return read;
    }

    private static void WaitUntil(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + TestServer.Timeout;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "What was sent did not arrive.");
            Thread.Sleep(1);
        }
    }

    private sealed class SocketPair : IDisposable
    {
        private SocketPair(Socket sending, Socket receiving) => (Sending, Receiving) = (sending, receiving);

        public Socket Sending { get; }
        public Socket Receiving { get; }

        public static SocketPair Open()
        {
            using var listener = new Socket(SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            var sending = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            sending.Connect(listener.LocalEndPoint!);
            return new SocketPair(sending, listener.Accept());
        }

        public void Dispose()
        {
            Sending.Dispose();
            Receiving.Dispose();
        }
    }
}
