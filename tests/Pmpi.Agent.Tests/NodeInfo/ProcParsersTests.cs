using Pmpi.Agent.NodeInfo.Internal;

namespace Pmpi.Agent.Tests.NodeInfo;

public class ProcParsersTests
{
    private const string X86CpuInfo = """
        processor	: 0
        vendor_id	: AuthenticAMD
        cpu family	: 25
        model		: 1
        model name	: AMD EPYC 7B13
        stepping	: 0

        processor	: 1
        vendor_id	: AuthenticAMD
        model name	: AMD EPYC 7B13

        """;

    // A Raspberry Pi 4 under a 64-bit kernel: no name line, only MIDR numbers, plus the SoC.
    private const string Arm64CpuInfo = """
        processor	: 0
        BogoMIPS	: 108.00
        Features	: fp asimd evtstrm crc32 cpuid
        CPU implementer	: 0x41
        CPU architecture: 8
        CPU variant	: 0x0
        CPU part	: 0xd08
        CPU revision	: 3

        processor	: 1
        CPU implementer	: 0x41
        CPU part	: 0xd08

        Hardware	: BCM2835
        Revision	: c03114
        Model		: Raspberry Pi 4 Model B Rev 1.4
        """;

    [Fact]
    public void ParseCpuModel_X86_ReturnsModelName()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel(X86CpuInfo);

        // Assert
        Assert.Equal("AMD EPYC 7B13", model);
    }

    [Fact]
    public void ParseCpuModel_Arm64WithoutModelName_MapsImplementerAndPart()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel(Arm64CpuInfo);

        // Assert
        Assert.Equal("ARM Cortex-A72", model);
    }

    [Fact]
    public void ParseCpuModel_BigLittleArm_JoinsDistinctCores()
    {
        // Arrange
        const string cpuinfo = """
            processor	: 0
            CPU implementer	: 0x41
            CPU part	: 0xd05
            processor	: 4
            CPU implementer	: 0x41
            CPU part	: 0xd0b
            processor	: 5
            CPU implementer	: 0x41
            CPU part	: 0xd0b
            """;

        // Act
        string? model = ProcParsers.ParseCpuModel(cpuinfo);

        // Assert
        Assert.Equal("ARM Cortex-A55 + ARM Cortex-A76", model);
    }

    [Fact]
    public void ParseCpuModel_UnknownArmPart_KeepsTheNumbers()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel("CPU implementer\t: 0xC0\nCPU part\t: 0xAC3\n");

        // Assert
        Assert.Equal("Ampere part 0xac3", model);
    }

    [Fact]
    public void ParseCpuModel_OldArm32_ReturnsProcessorLine()
    {
        // Act: capital-P "Processor" names the CPU, unlike x86's lower-case index.
        string? model = ProcParsers.ParseCpuModel("Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\nHardware\t: BCM2709\n");

        // Assert
        Assert.Equal("ARMv7 Processor rev 4 (v7l)", model);
    }

    [Fact]
    public void ParseCpuModel_PowerPc_ReturnsCpuLine()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 3800.000000MHz\n");

        // Assert
        Assert.Equal("POWER9 (raw), altivec supported", model);
    }

    [Fact]
    public void ParseCpuModel_OnlyHardwareLine_ReturnsHardware()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel("processor\t: 0\nHardware\t: Allwinner sun8i Family\n");

        // Assert
        Assert.Equal("Allwinner sun8i Family", model);
    }

    [Theory]
    [InlineData("")]
    [InlineData("processor\t: 0\nmodel name\t:\n")]
    [InlineData("garbage without separators")]
    public void ParseCpuModel_NothingUsable_ReturnsNull(string cpuinfo)
    {
        // Act
        string? model = ProcParsers.ParseCpuModel(cpuinfo);

        // Assert
        Assert.Null(model);
    }

    [Fact]
    public void ParseCpuModel_WindowsLineEndings_AreTrimmed()
    {
        // Act
        string? model = ProcParsers.ParseCpuModel("processor\t: 0\r\nmodel name\t: Intel(R) Xeon(R)\r\n");

        // Assert
        Assert.Equal("Intel(R) Xeon(R)", model);
    }

    [Fact]
    public void TryParseLoadAverage_KernelFormat_ReturnsThreeAverages()
    {
        // Act
        bool parsed = ProcParsers.TryParseLoadAverage("0.52 1.58 12.09 1/389 12345\n", out double one, out double five, out double fifteen);

        // Assert
        Assert.True(parsed);
        Assert.Equal((0.52, 1.58, 12.09), (one, five, fifteen));
    }

    [Theory]
    [InlineData("")]
    [InlineData("0.52 0.58")]
    [InlineData("0,52 0,58 0,59 1/389 12345")]
    public void TryParseLoadAverage_Malformed_ReturnsFalse(string loadavg)
    {
        // Act
        bool parsed = ProcParsers.TryParseLoadAverage(loadavg, out _, out _, out _);

        // Assert
        Assert.False(parsed);
    }

    [Fact]
    public void TryParseMemInfo_ModernKernel_UsesMemAvailable()
    {
        // Arrange
        const string meminfo = """
            MemTotal:       16314664 kB
            MemFree:          512000 kB
            MemAvailable:    8157332 kB
            Buffers:          100000 kB
            Cached:          4000000 kB
            HugePages_Total:       0
            Hugepagesize:       2048 kB
            """;

        // Act
        bool parsed = ProcParsers.TryParseMemInfo(meminfo, out long total, out long? available);

        // Assert
        Assert.True(parsed);
        Assert.Equal(16314664L * 1024, total);
        Assert.Equal(8157332L * 1024, available);
    }

    [Fact]
    public void TryParseMemInfo_KernelWithoutMemAvailable_EstimatesFromFreeBuffersCached()
    {
        // Arrange: kernels before 3.14 have no MemAvailable line.
        const string meminfo = "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n";

        // Act
        bool parsed = ProcParsers.TryParseMemInfo(meminfo, out long total, out long? available);

        // Assert
        Assert.True(parsed);
        Assert.Equal(1000L * 1024, total);
        Assert.Equal(420L * 1024, available);
    }

    [Fact]
    public void TryParseMemInfo_OnlyTotal_LeavesAvailableUnknown()
    {
        // Act
        bool parsed = ProcParsers.TryParseMemInfo("MemTotal: 2048 kB\n", out long total, out long? available);

        // Assert
        Assert.True(parsed);
        Assert.Equal(2048L * 1024, total);
        Assert.Null(available);
    }

    [Theory]
    [InlineData("")]
    [InlineData("MemFree: 100 kB\n")]
    [InlineData("MemTotal: lots kB\n")]
    [InlineData("MemTotal: 100 parsecs\n")]
    [InlineData("MemTotal: 99999999999999999999 kB\n")]
    public void TryParseMemInfo_NoUsableTotal_ReturnsFalse(string meminfo)
    {
        // Act
        bool parsed = ProcParsers.TryParseMemInfo(meminfo, out _, out _);

        // Assert
        Assert.False(parsed);
    }

    [Theory]
    [InlineData("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\n", "Debian GNU/Linux 13 (trixie)")]
    [InlineData("# comment\nPRETTY_NAME='Alpine Linux v3.20'\n", "Alpine Linux v3.20")]
    [InlineData("PRETTY_NAME=\"Say \\\"hi\\\"\"\n", "Say \"hi\"")]
    [InlineData("NAME=Fedora\nVERSION=\"40 (Server Edition)\"\n", "Fedora 40 (Server Edition)")]
    [InlineData("NAME=Arch\n", "Arch")]
    [InlineData("ID=unknown\n", null)]
    public void ParseOsReleaseName_Variants_ReturnsName(string osRelease, string? expected)
    {
        // Act
        string? name = ProcParsers.ParseOsReleaseName(osRelease);

        // Assert
        Assert.Equal(expected, name);
    }
}
