namespace Pmpi.Gateway;

/// <summary>What a gateway has relayed since it started; thread-safe, read by <c>Gateway.GetStatus</c>.</summary>
public sealed class GatewayCounters
{
    private long _streamsOpen, _streamsRelayed, _bytesRelayed, _streamsRefused, _controlCallsRelayed;

    /// <summary>Rank streams being relayed now.</summary>
    public long StreamsOpen => Interlocked.Read(ref _streamsOpen);

    /// <summary>Rank streams relayed since start (the open ones included).</summary>
    public long StreamsRelayed => Interlocked.Read(ref _streamsRelayed);

    /// <summary>Body bytes of the relayed streams, both directions.</summary>
    public long BytesRelayed => Interlocked.Read(ref _bytesRelayed);

    /// <summary>Streams and control calls refused before anything was forwarded.</summary>
    public long StreamsRefused => Interlocked.Read(ref _streamsRefused);

    /// <summary>Control calls relayed since start: launches and kills, registrations with gateways, ranks' calls to their master.</summary>
    public long ControlCallsRelayed => Interlocked.Read(ref _controlCallsRelayed);

    internal void StreamOpened()
    {
        Interlocked.Increment(ref _streamsOpen);
        Interlocked.Increment(ref _streamsRelayed);
    }

    internal void StreamClosed() => Interlocked.Decrement(ref _streamsOpen);

    internal void Relayed(int bytes) => Interlocked.Add(ref _bytesRelayed, bytes);

    internal void Refused() => Interlocked.Increment(ref _streamsRefused);

    internal void ControlCallRelayed() => Interlocked.Increment(ref _controlCallsRelayed);
}
