using Pmpi.Rpc;

namespace Pmpi.Bench.Launchers;

/// <summary>
/// Ranks as separate processes over the gRPC device: this process is one of them, started by a PMPI agent
/// (<c>pmpi run -n 2 Pmpi.Bench.dll pingpong --device grpc</c>), which put the rank's identity in the environment.
/// </summary>
public sealed class GrpcLauncher : IJobLauncher
{
    /// <inheritdoc/>
    public string Name => "grpc";

    /// <summary>True when an agent launched this process as a rank (the PMPI_* identity is in the environment).</summary>
    public static bool IsLaunchedRank => !string.IsNullOrEmpty(System.Environment.GetEnvironmentVariable(RankEnvironment.JobId));

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException">This process was not launched as a rank, or the job has another size.</exception>
    public void Run(int ranks, Action<Intracommunicator> body, EnvironmentOptions options)
    {
        var timeout = options.Timeout ?? Timeout.InfiniteTimeSpan;
        if (!IsLaunchedRank)
            throw new InvalidOperationException("--device grpc runs in rank processes: launch it as `pmpi run -n 2 Pmpi.Bench.dll pingpong --device grpc`.");
        var size = System.Environment.GetEnvironmentVariable(RankEnvironment.Size);
        if (size != ranks.ToString(System.Globalization.CultureInfo.InvariantCulture))
            throw new InvalidOperationException($"This benchmark needs {ranks} ranks; the job has {RankEnvironment.Size}={size}.");
        // A rank stuck on a dead peer must not hold the run forever; the agent reports the exit code.
        using var watchdog = new Timer(_ =>
        {
            Console.Error.WriteLine($"Benchmark rank timed out after {timeout.TotalSeconds:F0} s.");
            System.Environment.Exit(3);
        }, null, timeout, Timeout.InfiniteTimeSpan);
        string[] none = [];
        Environment.Run(ref none, body, options);
    }
}
