using System.Buffers;
using Grpc.Core;

namespace Pmpi.Rpc.Streams;

/// <summary>How one end of <see cref="Http2Connection"/>s behaves: a server (it admits calls) or a client.</summary>
internal sealed class Http2Endpoint
{
    /// <summary>
    /// A server's decision on a new call, from its first message: the receiver of its later messages, or an
    /// <see cref="RpcException"/> that refuses it. Null on a client.
    /// </summary>
    public Func<GrpcStream, ReadOnlySequence<byte>, IGrpcStreamReceiver>? Admit { get; init; }

    /// <summary>The one method a server serves.</summary>
    public string Path { get; init; } = "";

    /// <summary>The most a call's first message may be, before the call is admitted (a server's).</summary>
    public int MaxFirstMessageSize { get; init; } = 4096;

    public int MaxMessageSize { get; init; } = RpcOptions.DefaultMaxMessageSize;

    public int MaxStreams { get; init; } = 100;

    /// <summary>The window of an admitted call (a server's) or of every call (a client's).</summary>
    public int StreamWindow { get; init; } = 16 * 1024 * 1024;

    public int ConnectionWindow { get; init; } = 32 * 1024 * 1024;

    public TimeSpan PingDelay { get; init; } = TimeSpan.FromSeconds(10);

    public TimeSpan PingTimeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>How long a server's connection may go without admitting a call before it is closed.</summary>
    public TimeSpan AdmitTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a server's connection may hold no call before it is closed.</summary>
    public TimeSpan IdleTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>Told when a connection has closed (the listener forgets it).</summary>
    public Action<Http2Connection>? Closed { get; init; }
}
