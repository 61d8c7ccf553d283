namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A fact that builds network namespaces with firewall rules (<see cref="FirewalledDomains"/>): Linux, root, ip and
/// iptables (.ci/apt-packages installs them). Elsewhere it shows as skipped, saying why (xunit 2 has no runtime skip).
/// </summary>
public sealed class NetworkNamespaceFactAttribute : FactAttribute
{
    public NetworkNamespaceFactAttribute()
    {
        if (FirewalledDomains.Unavailable() is { } reason) Skip = reason;
    }
}
