using System.Buffers;
using Grpc.Core;
using Pmpi.Rpc.Streams;

namespace Pmpi.Rpc.Tests.Streams;

/// <summary>Keeps what a stream receives (copied: the bytes are the connection's only during the call).</summary>
internal sealed class Collector : IGrpcStreamReceiver
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
