using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Bench.Transport;

/// <summary>
/// The ping-pong over PMPI's own HTTP/2, as a rank uses it: a <see cref="GrpcStreamListener"/> whose admitted calls
/// echo each message from a thread that waits for calls, and a <see cref="GrpcStream.DialAsync"/> client. Each side writes
/// on its own thread straight to the socket and waits as a rank's Completion.Wait does (polling the connection for up
/// to 1 ms, then blocking until the connection's reader thread hands the message over); a message larger than
/// <see cref="GrpcStream.HeadSize"/> is read straight into the receiver's buffer (<see cref="IGrpcStreamSink"/>).
/// A Frame is written as a rank writes its Data frame: the encoded fields, then the payload's bytes as they are.
/// </summary>
public sealed class PmpiPingPong : IPingPong
{
    private readonly GrpcStreamListener _listener;
    private readonly RpcSecurity _dialing;

    /// <summary>h2c, or with <paramref name="tls"/> TLS as between two ranks beyond loopback: <see cref="RpcSecurity.RankEndpoint"/> at both ends, each pinning the other's certificate.</summary>
    public PmpiPingPong(bool tls)
    {
        if (tls)
        {
            var client = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out byte[] clientPin);
            string clientHex = Convert.ToHexString(clientPin);
            var server = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(pin => pin == clientHex), out byte[] serverPin);
            _listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Admit, server);
            _dialing = client.DialingPinned(serverPin);
        }
        else
        {
            _listener = GrpcStreamListener.Start(IPAddress.Loopback, 0, ServicePaths.Connect, Admit, RpcSecurity.Insecure);
            _dialing = RpcSecurity.Insecure;
        }
    }

    public string Name => "PMPI";

    public async Task<IPingPongConnection> ConnectAsync(int size)
    {
        var stream = await GrpcStream.DialAsync(_listener.Address, ServicePaths.Connect, _dialing).ConfigureAwait(false);
        var mailbox = new Mailbox();
        try
        {
            stream.Write(PingPongFrames.Hello);
            stream.Start(mailbox);
            if (!mailbox.Take(stream, out _)) throw new InvalidOperationException("The echo ended the call before echoing the Hello.");
            return new Connection(stream, mailbox, size);
        }
        catch
        {
            stream.Dispose();
            throw;
        }
    }

    public ValueTask DisposeAsync()
    {
        _listener.Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// Each call echoes from a thread of the listener's, which writes what arrived back as it came. The threads start
    /// with the listener, so a connect does not time a thread's start that a rank would not pay.
    /// </summary>
    private static IGrpcStreamReceiver Admit(GrpcStream stream, ReadOnlySequence<byte> first)
    {
        var mailbox = new Mailbox();
        mailbox.OnMessage(first);
        Calls.Add((stream, mailbox));
        return mailbox;
    }

    private static readonly BlockingCollection<(GrpcStream Stream, Mailbox Mailbox)> Calls = StartEchoes(2);

    private static BlockingCollection<(GrpcStream, Mailbox)> StartEchoes(int threads)
    {
        var calls = new BlockingCollection<(GrpcStream, Mailbox)>();
        for (int i = 0; i < threads; i++)
        {
            new Thread(() =>
            {
                foreach (var (stream, mailbox) in calls.GetConsumingEnumerable())
                {
                    try
                    {
                        while (mailbox.Take(stream, out var message)) stream.Write(message, []);
                        stream.Complete();
                    }
                    catch (RpcException)
                    {
                        // The client went away.
                    }
                }
            })
            { IsBackground = true, Name = "PMPI echo" }.Start();
        }
        return calls;
    }

    private sealed class Connection(GrpcStream stream, Mailbox mailbox, int size) : IPingPongConnection
    {
        private readonly byte[] _head = PingPongFrames.DataHead(size);
        private readonly byte[] _payload = PingPongFrames.Payload(size);

        public Task RoundTripsAsync(long[] ticks)
        {
            for (int i = 0; i < ticks.Length; i++)
            {
                long start = Stopwatch.GetTimestamp();
                stream.Write(_head, _payload);
                if (!mailbox.Take(stream, out var echoed)) throw new InvalidOperationException("The echo ended the call.");
                ticks[i] = Stopwatch.GetTimestamp() - start;
                if (echoed.Length != _head.Length + _payload.Length) throw new InvalidOperationException($"Echo of {echoed.Length} bytes, not {_head.Length + _payload.Length}.");
            }
            return Task.CompletedTask;
        }

        public ValueTask DisposeAsync()
        {
            try
            {
                stream.Complete();
                mailbox.Take(stream, out _); // the echo's end of the call
            }
            finally
            {
                stream.Dispose();
            }
            return ValueTask.CompletedTask;
        }
    }

    /// <summary>One message at a time, from the connection's reader (or a polling thread) to the thread that waits for it.</summary>
    private sealed class Mailbox : IGrpcStreamSink
    {
        private static readonly long SpinTicks = Stopwatch.Frequency / 1_000; // a rank's, when its node has a core for each rank
        private const int CloseSpins = 64;
        private readonly ManualResetEventSlim _arrived = new(false, 0);
        private byte[] _buffer = new byte[4096];
        private int _length;
        private bool _ended;

        public void OnMessage(ReadOnlySequence<byte> message)
        {
            _length = (int)message.Length;
            Ensure(_length);
            message.CopyTo(_buffer);
            _arrived.Set();
        }

        public Memory<byte> OnMessageStart(ReadOnlyMemory<byte> head, int length)
        {
            _length = length;
            Ensure(length);
            head.CopyTo(_buffer);
            return _buffer.AsMemory(head.Length, length - head.Length);
        }

        public void OnMessageEnd() => _arrived.Set();

        public void OnEnd(RpcException? error)
        {
            _ended = true;
            _arrived.Set();
        }

        /// <summary>Waits for the next message (false: the call ended) as Completion.Wait does: polls, then blocks.</summary>
        public bool Take(GrpcStream stream, out ReadOnlySpan<byte> message)
        {
            long start = 0;
            var spinner = new SpinWait();
            for (int spins = 1; !_arrived.IsSet; spins++)
            {
                if ((spins & 63) == 0)
                {
                    long now = Stopwatch.GetTimestamp();
                    if (start == 0) start = now;
                    else if (now - start >= SpinTicks) break;
                }
                stream.Poll();
                if (_arrived.IsSet || stream.ReadingLargePiece) break;
                if (spins < CloseSpins) Thread.SpinWait(1);
                else spinner.SpinOnce(sleep1Threshold: -1);
            }
            if (!_arrived.IsSet)
            {
                stream.PollingStopped();
                _arrived.Wait();
            }
            _arrived.Reset();
            message = _ended ? default : _buffer.AsSpan(0, _length);
            return !_ended;
        }

        private void Ensure(int length)
        {
            if (_buffer.Length < length) _buffer = new byte[length];
        }
    }
}
