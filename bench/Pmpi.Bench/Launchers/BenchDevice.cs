namespace Pmpi.Bench.Launchers;

/// <summary>The PMPI device a benchmark's ranks talk through (<c>--device</c>).</summary>
public enum BenchDevice
{
    /// <summary>Ranks are threads of this process; a send is a call into the receiver's matching engine.</summary>
    InProcess,

    /// <summary>One process per rank over the gRPC device (process-to-process), launched by <c>pmpi run</c>.</summary>
    Grpc,
}
