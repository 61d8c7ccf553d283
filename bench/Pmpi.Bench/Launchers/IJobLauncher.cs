namespace Pmpi.Bench.Launchers;

/// <summary>
/// Starts the ranks of a benchmark job on one device and runs the same rank body on each. A benchmark is written once
/// against <see cref="Intracommunicator"/>; the launcher decides whether ranks are threads or processes.
/// </summary>
public interface IJobLauncher
{
    /// <summary>The device's name as printed in results, e.g. "inprocess".</summary>
    string Name { get; }

    /// <summary>
    /// Runs <paramref name="body"/> on <paramref name="ranks"/> ranks and returns when all have finished, aborting them
    /// after <see cref="EnvironmentOptions.Timeout"/>; the ranks start with <paramref name="options"/>.
    /// </summary>
    void Run(int ranks, Action<Intracommunicator> body, EnvironmentOptions options);
}

/// <summary>The launcher for each <see cref="BenchDevice"/>.</summary>
public static class JobLaunchers
{
    /// <summary>The launcher of <paramref name="device"/>.</summary>
    public static IJobLauncher For(BenchDevice device) => device switch
    {
        BenchDevice.InProcess => new InProcessLauncher(),
        BenchDevice.Grpc => new GrpcLauncher(),
        _ => throw new ArgumentOutOfRangeException(nameof(device), device, null),
    };
}

/// <summary>Ranks as threads of this process, through <see cref="Environment.Run(int, Action{Intracommunicator}, EnvironmentOptions?)"/>.</summary>
public sealed class InProcessLauncher : IJobLauncher
{
    /// <inheritdoc/>
    public string Name => "inprocess";

    /// <inheritdoc/>
    public void Run(int ranks, Action<Intracommunicator> body, EnvironmentOptions options) => Environment.Run(ranks, body, options);
}
