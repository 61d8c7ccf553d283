namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A fact that runs a process in a mount namespace of its own with a tmpfs mounted in it (unshare): Linux and root.
/// Elsewhere it shows as skipped, saying why (xunit 2 has no runtime skip).
/// </summary>
public sealed class MountNamespaceFactAttribute : FactAttribute
{
    public MountNamespaceFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: mount namespaces.";
        else if (System.Environment.UserName != "root") Skip = "Needs root, to mount a tmpfs in a mount namespace.";
        else if (!File.Exists("/usr/bin/unshare")) Skip = "unshare is missing (Debian: util-linux).";
    }
}
