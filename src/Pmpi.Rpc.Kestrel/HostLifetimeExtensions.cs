using Microsoft.Extensions.Hosting;

namespace Pmpi.Rpc.Kestrel;

/// <summary>What a daemon's host (agent, gateway) waits on between starting and stopping.</summary>
public static class HostLifetimeExtensions
{
    /// <summary>Completes when the host is asked to stop: SIGTERM, Ctrl+C, the service manager, or StopApplication.</summary>
    public static async Task WaitForStopRequestAsync(this IHostApplicationLifetime lifetime, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(lifetime);
        var requested = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var stopping = lifetime.ApplicationStopping.Register(() => requested.TrySetResult());
        using var cancelled = cancellationToken.Register(() => requested.TrySetCanceled(cancellationToken));
        await requested.Task.ConfigureAwait(false);
    }
}
