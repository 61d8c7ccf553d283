namespace Pmpi.Devices;

/// <summary>What carries a link's messages; how the rank's meters name its traffic (<see cref="Hosting.RankMeters"/>).</summary>
internal enum LinkKind
{
    /// <summary>The rank to itself.</summary>
    Self,

    /// <summary>A rank that is another thread of this process (an in-process job).</summary>
    InProcess,

    /// <summary>Rings in memory both ranks map, on one node.</summary>
    SharedMemory,

    /// <summary>A stream straight to the peer's endpoint.</summary>
    Network,

    /// <summary>A stream through the gateways of both ranks' domains.</summary>
    Gateway,

    /// <summary>A rank of a world this one is not connected to: nothing is sent.</summary>
    Unconnected,
}
