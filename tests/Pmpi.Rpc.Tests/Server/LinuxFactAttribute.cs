namespace Pmpi.Rpc.Tests.Server;

/// <summary>A fact that runs only on Linux, which routes all of 127.0.0.0/8 to loopback (xunit 2 has no runtime skip).</summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: the test dials from 127.0.0.2.";
    }
}
