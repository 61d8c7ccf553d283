using System.Collections.Immutable;
using Pmpi.Collectives;
using Pmpi.Devices;
using Pmpi.Payloads;

namespace Pmpi.Hosting;

/// <summary>
/// Everything one rank owns: its device and links, its job control, its serializer, its predefined communicators and
/// context ids, and the intercommunicators of the worlds it spawned or was spawned by.
/// </summary>
internal sealed class RankRuntime
{
    // Contexts come in pairs (point-to-point, collective): world 0/1, self 2/3, then allocated ones.
    private const int FirstFreeContext = 4;

    private static readonly AsyncLocal<RankRuntime?> CurrentRank = new();

    private int _nextContext = FirstFreeContext;

    /// <param name="device">The rank's device.</param>
    /// <param name="control">Its job control.</param>
    /// <param name="payloads">How it serializes.</param>
    /// <param name="collectives">The sizes at which its collectives change algorithm, which every communicator reads as it is made.</param>
    /// <param name="spawner">What starts ranks in its job; null for ranks that are threads, or a singleton, which cannot spawn.</param>
    public RankRuntime(IDevice device, IJobControl control, PayloadSettings payloads, CollectiveOptions collectives, IRankSpawner? spawner = null)
    {
        Device = device;
        Links = device.Links;
        Control = control;
        Payloads = payloads;
        Collectives = collectives;
        Spawner = spawner;
        MainThreadId = System.Environment.CurrentManagedThreadId;
        // A loop, not Enumerable.Range, as in LaunchedRank.StartAsync: ReadyToRun images lack its code over int, and
        // every rank runs this as it starts.
        var world = new int[device.Size];
        for (int rank = 0; rank < world.Length; rank++) world[rank] = device.WorldFirst + rank;
        World = new Intracommunicator(this, context: 0, world, device.Rank - device.WorldFirst);
        Self = new Intracommunicator(this, context: 2, [device.Rank], 0);
        Place = new NodePlace(World.Rank, World.Size, NodeRank: 0);
        RankMeters.Track(this);
    }

    /// <summary>What the rank has sent, by link kind, for its meters.</summary>
    public RankTraffic Traffic { get; } = new();

    /// <summary>
    /// Where the rank sits on its node. Defaults to every rank of the world on one node, as threads of one process
    /// are; a launched rank takes its agent's word, null when the agent said nothing.
    /// </summary>
    public NodePlace? Place { get; init; }

    /// <summary>The rank running on this thread (or async flow); null outside a PMPI rank.</summary>
    public static RankRuntime? Current
    {
        get => CurrentRank.Value;
        set => CurrentRank.Value = value;
    }

    public IDevice Device { get; }

    /// <summary>The thread that initialised this rank (MPI_Is_thread_main).</summary>
    public int MainThreadId { get; }

    /// <summary>The link to each job rank (the device's, held here so a send costs one interface call).</summary>
    public ImmutableArray<ILink> Links { get; private set; }

    public IRankSpawner? Spawner { get; }

    /// <summary>The intercommunicator to the ranks that spawned this rank's world (MPI_Comm_get_parent); null when none did.</summary>
    public Intercommunicator? Parent { get; set; }

    /// <summary>
    /// Intercommunicators to the worlds this rank's world was spawned by and took part in spawning, in order: twins
    /// of the program's, which it may dispose, that Finalize synchronises over (MPI's connected processes).
    /// </summary>
    public List<Intercommunicator> Connected { get; } = [];

    public IJobControl Control { get; }

    public PayloadSettings Payloads { get; }

    /// <summary>The sizes at which the collectives change algorithm; each communicator reads them once, as it is made (<see cref="CollectiveSelection"/>).</summary>
    public CollectiveOptions Collectives { get; }

    public Intracommunicator World { get; }

    public Intracommunicator Self { get; }

    /// <summary>This rank's lowest context id not yet in use; new communicators agree on the maximum over members.</summary>
    public int NextFreeContext => _nextContext;

    public void MarkContextUsed(int context) => _nextContext = Math.Max(_nextContext, context + 2);

    /// <summary>Takes the device's links again, after it linked to spawned ranks.</summary>
    public void RefreshLinks() => Links = Device.Links;

    /// <summary>Aborts the job through its control, and this rank's own operations at once whatever the control does.</summary>
    public void Abort(MpiException reason)
    {
        Control.Abort(reason);
        Device.Engine.Abort(reason);
    }
}
