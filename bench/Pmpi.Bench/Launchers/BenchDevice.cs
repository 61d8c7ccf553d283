namespace Pmpi.Bench.Launchers;

/// <summary>The PMPI device a benchmark's ranks talk through (<c>--device</c>).</summary>
public enum BenchDevice
{
    /// <summary>Ranks are threads of this process; a send is a call into the receiver's matching engine.</summary>
    InProcess,

    /// <summary>One process per rank over gRPC (process-to-process). Not implemented yet: the device is on its way.</summary>
    Grpc,
}
