using Grpc.Core;

namespace Pmpi.Agent.Internal;

/// <summary>
/// A response stream that more than one writer shares: gRPC for .NET takes one write at a time, and a launch's stream
/// has two writers, its pump and the agent's shutdown notice.
/// </summary>
internal sealed class SharedStreamWriter<T>(IServerStreamWriter<T> stream)
{
    private readonly SemaphoreSlim _gate = new(1, 1);

    /// <summary>Writes <paramref name="message"/> once no other write is in progress.</summary>
    public async Task WriteAsync(T message, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await stream.WriteAsync(message, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }
}
