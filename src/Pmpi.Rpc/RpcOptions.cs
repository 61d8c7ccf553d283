namespace Pmpi.Rpc;

/// <summary>Limits of the gRPC layer, the same for servers and clients.</summary>
public sealed class RpcOptions
{
    /// <summary>
    /// The largest message accepted, in bytes. Defaults to 16,777,216 (16 MB); PMPI's transport chunks large MPI
    /// messages well below it.
    /// </summary>
    public int MaxMessageSize { get; init; } = 16 * 1024 * 1024;

    /// <summary>The defaults.</summary>
    public static RpcOptions Default { get; } = new();
}
