namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>A fact that runs only on Linux and shows as skipped elsewhere, saying why (xunit 2 has no runtime skip).</summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: the test sends SIGTERM and reads /proc.";
    }
}
