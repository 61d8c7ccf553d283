using Pmpi.Devices;
using Pmpi.Devices.InProcess;

namespace Pmpi.Tests;

/// <summary>The device this test assembly runs the semantic suite on: ranks as threads sharing memory.</summary>
internal static class TestDevice
{
    public static IThreadedJob CreateJob(int ranks) => new InProcessJob(ranks);
}
