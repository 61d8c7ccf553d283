using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Pmpi.Agent.NodeInfo;
using Pmpi.Agent.NodeInfo.Internal;

namespace Pmpi.Agent.Tests.NodeInfo;

// Every test is a LinuxFact, skipped elsewhere, so the platform claim holds.
[SupportedOSPlatform("linux")]
public class LinuxNodeInfoProviderTests
{
    [LinuxFact]
    public void GetMetadata_ThisMachine_ReturnsPlausibleValues()
    {
        // Arrange
        var provider = NodeInfoProviderFactory.Create();

        // Act
        var metadata = provider.GetMetadata();

        // Assert
        Assert.IsType<LinuxNodeInfoProvider>(provider);
        Assert.False(string.IsNullOrWhiteSpace(metadata.NodeName));
        Assert.Equal(Environment.ProcessorCount, metadata.LogicalCores);
        Assert.True(metadata.MemoryTotalBytes > 0);
        Assert.NotNull(metadata.MemoryAvailableBytes);
        Assert.InRange(metadata.MemoryAvailableBytes.Value, 0, metadata.MemoryTotalBytes);
        Assert.NotNull(metadata.LoadAverage1);
        Assert.True(metadata.LoadAverage1 >= 0 && metadata.LoadAverage5 >= 0 && metadata.LoadAverage15 >= 0);
        Assert.False(string.IsNullOrWhiteSpace(metadata.OsDescription));
        Assert.Matches(@"^\d+\.\d+", metadata.OsVersion);
        Assert.Equal(RuntimeInformation.OSArchitecture, metadata.Architecture);
        Assert.StartsWith(".NET ", metadata.RuntimeDescription, StringComparison.Ordinal);
    }

    [LinuxFact]
    public void GetMetadata_SampleProcDirectory_ReadsItsFiles()
    {
        // Arrange
        string dir = Directory.CreateTempSubdirectory("pmpi-proc-").FullName;
        try
        {
            File.WriteAllText(Path.Combine(dir, "cpuinfo"), "processor\t: 0\nmodel name\t: Test CPU 9000\n");
            File.WriteAllText(Path.Combine(dir, "loadavg"), "1.50 0.75 0.25 2/100 42\n");
            File.WriteAllText(Path.Combine(dir, "meminfo"), "MemTotal: 4096 kB\nMemAvailable: 1024 kB\n");
            File.WriteAllText(Path.Combine(dir, "os-release"), "PRETTY_NAME=\"Test OS 1\"\n");
            var provider = new LinuxNodeInfoProvider(dir, Path.Combine(dir, "os-release"));

            // Act
            var metadata = provider.GetMetadata();

            // Assert
            Assert.Equal("Test CPU 9000", metadata.CpuModel);
            Assert.Equal((1.50, 0.75, 0.25), (metadata.LoadAverage1, metadata.LoadAverage5, metadata.LoadAverage15));
            Assert.Equal(4096L * 1024, metadata.MemoryTotalBytes);
            Assert.Equal(1024L * 1024, metadata.MemoryAvailableBytes);
            Assert.Equal("Test OS 1", metadata.OsDescription);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [LinuxFact]
    public void GetMetadata_EmptyProcDirectory_FallsBackInsteadOfThrowing()
    {
        // Arrange: containers and hardened kernels may hide /proc files.
        string dir = Directory.CreateTempSubdirectory("pmpi-proc-").FullName;
        try
        {
            var provider = new LinuxNodeInfoProvider(dir, Path.Combine(dir, "missing-os-release"));

            // Act
            var metadata = provider.GetMetadata();

            // Assert
            Assert.Null(metadata.CpuModel);
            Assert.Null(metadata.LoadAverage1);
            Assert.Null(metadata.MemoryAvailableBytes);
            Assert.True(metadata.MemoryTotalBytes > 0);
            Assert.Equal(Environment.ProcessorCount, metadata.LogicalCores);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
