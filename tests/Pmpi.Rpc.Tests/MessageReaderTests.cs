using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests;

/// <summary>The message reader and writer over in-memory pipes, without HTTP.</summary>
public sealed class MessageReaderTests
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;

    [Fact]
    public async Task ReadAsync_SeveralMessagesInOneFlush_EachReturnedWithoutWaitingForMoreBytes()
    {
        var pipe = new Pipe();
        var bytes = new List<byte>();
        for (ulong i = 1; i <= 3; i++) bytes.AddRange(Framed(new Frame { Ack = new Ack { Sequence = i } }));
        await pipe.Writer.WriteAsync(bytes.ToArray()).AsTask().WaitAsync(Timeout);
        var reader = new MessageReader<Frame>(pipe.Reader, RpcOptions.Default);

        var sequences = new List<ulong>();
        for (int i = 0; i < 3; i++) sequences.Add((await reader.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout))!.Ack.Sequence);

        Assert.Equal([1UL, 2UL, 3UL], sequences);
    }

    [Fact]
    public async Task ReadAsync_MessageArrivesByteByByte_ReturnedWhole()
    {
        var pipe = new Pipe();
        var reader = new MessageReader<Frame>(pipe.Reader, RpcOptions.Default);
        var read = reader.ReadAsync(CancellationToken.None).AsTask();

        foreach (byte b in Framed(new Frame { Hello = new Hello { JobId = "job", SourceWorldRank = 3 } }))
            await pipe.Writer.WriteAsync(new[] { b }).AsTask().WaitAsync(Timeout);

        Assert.Equal(3, (await read.WaitAsync(Timeout))!.Hello.SourceWorldRank);
    }

    [Fact]
    public async Task ReadAsync_StreamEndsInsideMessage_InternalError()
    {
        var pipe = new Pipe();
        var framed = Framed(new Frame { Hello = new Hello { JobId = "job" } });
        await pipe.Writer.WriteAsync(framed.AsMemory(0, framed.Length - 1)).AsTask().WaitAsync(Timeout);
        await pipe.Writer.CompleteAsync().AsTask().WaitAsync(Timeout);
        var reader = new MessageReader<Frame>(pipe.Reader, RpcOptions.Default);

        var error = await Assert.ThrowsAsync<RpcException>(() => reader.ReadAsync(CancellationToken.None).AsTask()).WaitAsync(Timeout);

        Assert.Equal(StatusCode.Internal, error.StatusCode);
    }

    [Fact]
    public async Task ReadAsync_EndOfStream_Null()
    {
        var pipe = new Pipe();
        await pipe.Writer.CompleteAsync().AsTask().WaitAsync(Timeout);

        Assert.Null(await new MessageReader<Frame>(pipe.Reader, RpcOptions.Default).ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout));
    }

    [Fact]
    public async Task WriteAsync_ConcurrentWriters_MessagesNeverInterleave()
    {
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0));
        var writer = new MessageWriter<Frame>(pipe.Writer);
        var payload = ByteString.CopyFrom(new byte[10_000]);

        var writes = new Task[8];
        for (int w = 0; w < writes.Length; w++)
        {
            int id = w;
            writes[w] = Task.Run(async () =>
            {
                for (int i = 0; i < 50; i++) await writer.WriteAsync(new Frame { Data = new Data { Source = id, Sequence = (ulong)i, Payload = payload } }, CancellationToken.None);
            });
        }
        await Task.WhenAll(writes).WaitAsync(Timeout);
        await pipe.Writer.CompleteAsync().AsTask().WaitAsync(Timeout);

        var reader = new MessageReader<Frame>(pipe.Reader, RpcOptions.Default);
        var next = new ulong[writes.Length];
        int count = 0;
        while (await reader.ReadAsync(CancellationToken.None).AsTask().WaitAsync(Timeout) is { } frame)
        {
            Assert.Equal(next[frame.Data.Source]++, frame.Data.Sequence);
            count++;
        }
        Assert.Equal(400, count);
    }

    private static byte[] Framed(IMessage message)
    {
        var body = message.ToByteArray();
        var framed = new byte[5 + body.Length];
        BinaryPrimitives.WriteInt32BigEndian(framed.AsSpan(1), body.Length);
        body.CopyTo(framed, 5);
        return framed;
    }
}
