namespace Pmpi.Agent.Tests.NodeInfo;

/// <summary>A fact that runs only on Linux and shows as skipped elsewhere (xunit 2 has no runtime skip).</summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only";
    }
}
