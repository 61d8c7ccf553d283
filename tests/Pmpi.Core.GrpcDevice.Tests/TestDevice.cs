using Pmpi.Devices;
using Pmpi.Devices.InProcess;

namespace Pmpi.Tests;

/// <summary>The jobs this test assembly can run; its suite classes choose <see cref="Device.Grpc"/> or <see cref="Device.SharedMemory"/>.</summary>
internal static class TestDevice
{
    public static IThreadedJob CreateJob(Device device, int ranks) => device switch
    {
        Device.Grpc => new LoopbackGrpcJob(ranks),
        Device.SharedMemory => new LoopbackGrpcJob(ranks, sameNode: true),
        _ => new InProcessJob(ranks),
    };
}
