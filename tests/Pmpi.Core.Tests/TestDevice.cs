using Pmpi.Devices;
using Pmpi.Devices.InProcess;

namespace Pmpi.Tests;

/// <summary>The jobs this test assembly can run: in-process only (the gRPC suite is tests/Pmpi.Core.GrpcDevice.Tests).</summary>
internal static class TestDevice
{
    public static IThreadedJob CreateJob(Device device, int ranks) => device == Device.InProcess
        ? new InProcessJob(ranks)
        : throw new NotSupportedException($"This assembly runs the suite in-process; {device} runs in Pmpi.Core.GrpcDevice.Tests.");
}
