using System.Collections.Immutable;
using Pmpi.Devices;
using Pmpi.Payloads;

namespace Pmpi.Hosting;

/// <summary>
/// Everything one rank owns: its device and links, its job control, its serializer, its predefined communicators and
/// context ids.
/// </summary>
internal sealed class RankRuntime
{
    // Contexts come in pairs (point-to-point, collective): world 0/1, self 2/3, then allocated ones.
    private const int FirstFreeContext = 4;

    private static readonly AsyncLocal<RankRuntime?> CurrentRank = new();

    private int _nextContext = FirstFreeContext;

    public RankRuntime(IDevice device, IJobControl control, PayloadSettings payloads)
    {
        Device = device;
        Links = device.Links;
        Control = control;
        Payloads = payloads;
        MainThreadId = System.Environment.CurrentManagedThreadId;
        World = new Intracommunicator(this, context: 0, Enumerable.Range(0, device.Size).ToArray(), device.Rank);
        Self = new Intracommunicator(this, context: 2, [device.Rank], 0);
    }

    /// <summary>The rank running on this thread (or async flow); null outside a PMPI rank.</summary>
    public static RankRuntime? Current
    {
        get => CurrentRank.Value;
        set => CurrentRank.Value = value;
    }

    public IDevice Device { get; }

    /// <summary>The thread that initialised this rank (MPI_Is_thread_main).</summary>
    public int MainThreadId { get; }

    /// <summary>The link to each world rank (the device's, held here so a send costs one interface call).</summary>
    public ImmutableArray<ILink> Links { get; }

    public IJobControl Control { get; }

    public PayloadSettings Payloads { get; }

    public Intracommunicator World { get; }

    public Intracommunicator Self { get; }

    /// <summary>This rank's lowest context id not yet in use; new communicators agree on the maximum over members.</summary>
    public int NextFreeContext => _nextContext;

    public void MarkContextUsed(int context) => _nextContext = Math.Max(_nextContext, context + 2);

    /// <summary>Aborts the job through its control, and this rank's own operations at once whatever the control does.</summary>
    public void Abort(MpiException reason)
    {
        Control.Abort(reason);
        Device.Engine.Abort(reason);
    }
}
