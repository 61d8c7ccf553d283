namespace Pmpi.Bench.Transport;

/// <summary>One side of the comparison: a server in this process that echoes, and the clients that dial it.</summary>
public interface IPingPong : IAsyncDisposable
{
    string Name { get; }

    /// <summary>A new connection and call, its Hello echoed: ready for <paramref name="size"/>-byte round trips.</summary>
    Task<IPingPongConnection> ConnectAsync(int size);
}

/// <summary>A call that ping-pongs one Data frame of a fixed size.</summary>
public interface IPingPongConnection : IAsyncDisposable
{
    /// <summary>One round trip per element, each one's Stopwatch ticks written there.</summary>
    Task RoundTripsAsync(long[] ticks);
}
