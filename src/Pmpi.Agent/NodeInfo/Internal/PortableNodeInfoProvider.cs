using System.Runtime.InteropServices;

namespace Pmpi.Agent.NodeInfo.Internal;

/// <summary>For systems without a dedicated provider (e.g. macOS): only what .NET itself knows.</summary>
internal sealed class PortableNodeInfoProvider : INodeInfoProvider
{
    public NodeMetadata GetMetadata() =>
        NodeFacts.Create(null, null, NodeFacts.GcTotalMemory(), null, RuntimeInformation.OSDescription);
}
