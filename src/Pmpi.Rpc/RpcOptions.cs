namespace Pmpi.Rpc;

/// <summary>Limits of the gRPC layer, the same for servers and clients.</summary>
public sealed class RpcOptions
{
    /// <summary>The default of <see cref="MaxMessageSize"/>: 67,108,864 (64 MB).</summary>
    public const int DefaultMaxMessageSize = 64 * 1024 * 1024;

    /// <summary>
    /// The largest message sent or accepted, in bytes (the protobuf bytes, without the 5-byte gRPC prefix).
    /// Defaults to 67,108,864 (64 MB). A larger incoming message fails its call with RESOURCE_EXHAUSTED; a larger
    /// outgoing one is refused before anything is written. PMPI's transport chunks large MPI messages well below it,
    /// so the limit only bounds what one misbehaving peer can make this process buffer.
    /// </summary>
    public int MaxMessageSize
    {
        get;
        init
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(value);
            field = value;
        }
    } = DefaultMaxMessageSize;

    /// <summary>
    /// How long a client's connection may bring no frame, while a call is open, before it sends an HTTP/2 PING.
    /// Defaults to 30 seconds. The server's HTTP/2 stack answers, so a busy server answers and a frozen one does not.
    /// </summary>
    public TimeSpan PingDelay { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>How long a client's PING may go unanswered before its connection and calls fail (UNAVAILABLE). Defaults to 60 seconds.</summary>
    public TimeSpan PingTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>The defaults.</summary>
    public static RpcOptions Default { get; } = new();
}
