namespace Pmpi.Tests.Shared;

/// <summary>
/// A fact that runs only on Linux and shows as skipped elsewhere (xunit 2 has no runtime skip): what such a test
/// needs (/proc, signals, /dev/shm, 127.0.0.2) its own summary says.
/// </summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only.";
    }
}
