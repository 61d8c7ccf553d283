using Pmpi.Devices;

namespace Pmpi.Tests;

/// <summary>The device this test assembly runs the semantic suite on: ranks as threads talking gRPC over loopback.</summary>
internal static class TestDevice
{
    public static IThreadedJob CreateJob(int ranks) => new LoopbackGrpcJob(ranks);
}
