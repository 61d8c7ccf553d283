using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using Pmpi.Rpc;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// The memory two ranks of one node share: a small header, then one <see cref="ByteRing"/> per direction (the lower
/// rank's sends first). The header holds a slot per rank where it states its process and a probe word, so that the
/// peer can find out whether it may copy large messages straight out of this rank's memory (<see cref="PeerMemory"/>).
/// Its name is derived from the job key, so no one outside the job can guess it (<see cref="SharedMemoryNames"/>).
/// On Linux it is a file in /dev/shm, created owner-only by whichever rank comes first and removed as soon as both
/// have mapped it, so nothing is left behind even if both are killed; a rank whose peer never came removes it as it
/// ends, or its agent does if it was killed. On Windows a named mapping, which ends with its last handle.
/// Size: <see cref="Size"/> = 64 + 2 × (256 + <see cref="RingCapacity"/>) bytes per pair, about 1 MB; tmpfs gives
/// pages only as they are first written.
/// </summary>
internal sealed unsafe class PairSegment : IDisposable
{
    /// <summary>Bytes of each direction's ring.</summary>
    public const int RingCapacity = 512 * 1024;

    private const int HeaderSize = 64, MagicOffset = 0, CapacityOffset = 4, MappedOffset = 8;
    // A rank's slot, the lower rank's first: its process id, whether its peer has read its probe (so may copy from
    // it), the probe's address in its process and the value it holds.
    private const int SlotOffset = 16, SlotSize = 24, PidInSlot = 0, ReadableInSlot = 4, ProbeAddressInSlot = 8, ProbeValueInSlot = 16;
    private const int Magic = 0x49504D50; // "PMPI"

    // A word of this process at a fixed address whose value the peer can compare with the one in the slot.
    private static readonly long[] s_probe = NewProbe();
    private static readonly TimeSpan OpenTimeout = TimeSpan.FromSeconds(10);

    private readonly MemoryMappedFile _file;
    private readonly string? _path; // the file's name while the peer may still come to map it (Linux)
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _start;
    private readonly byte* _own, _peer; // the two ranks' slots

    private PairSegment(MemoryMappedFile file, string? path, int self, int peer, string name, Func<bool> closed, Action? sleeping)
    {
        _file = file;
        _path = path;
        _view = file.CreateViewAccessor(0, Size, MemoryMappedFileAccess.ReadWrite);
        byte* start = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref start);
        _start = start + _view.PointerOffset;
        var lowerToHigher = new ByteRing(_start + HeaderSize, RingCapacity, name + "-up", closed, sleeping);
        var higherToLower = new ByteRing(_start + HeaderSize + ByteRing.ControlSize + RingCapacity, RingCapacity, name + "-down", closed, sleeping);
        (Outgoing, Incoming) = self < peer ? (lowerToHigher, higherToLower) : (higherToLower, lowerToHigher);
        _own = _start + SlotOffset + (self < peer ? 0 : SlotSize);
        _peer = _start + SlotOffset + (self < peer ? SlotSize : 0);
        *(int*)(_own + PidInSlot) = System.Environment.ProcessId;
        *(long*)(_own + ProbeAddressInSlot) = (long)Unsafe.AsPointer(ref s_probe[0]);
        *(long*)(_own + ProbeValueInSlot) = s_probe[0];
    }

    public static long Size => HeaderSize + 2L * (ByteRing.ControlSize + RingCapacity);

    /// <summary>What this rank writes for the peer.</summary>
    public ByteRing Outgoing { get; }

    /// <summary>What the peer writes for this rank.</summary>
    public ByteRing Incoming { get; }

    /// <summary>The peer's process, as it stated it.</summary>
    public int PeerProcessId => Volatile.Read(ref *(int*)(_peer + PidInSlot));

    /// <summary>Whether the peer has shown it can copy out of this rank's memory (<see cref="CheckPeerReadable"/> on its side).</summary>
    public bool PeerReadsThisRank => Volatile.Read(ref *(int*)(_own + ReadableInSlot)) == 1;

    /// <summary>
    /// Copies the peer's probe word out of its process and, if it holds what the peer stated, tells the peer that
    /// this rank may copy from it: the kernel let this rank read the peer's memory once, so it will again.
    /// </summary>
    public void CheckPeerReadable()
    {
        if (!PeerMemory.IsSupported || PeerProcessId <= 0) return;
        long probe = 0;
        try
        {
            PeerMemory.Read(PeerProcessId, *(long*)(_peer + ProbeAddressInSlot), MemoryMarshal.AsBytes(new Span<long>(ref probe)));
        }
        catch (IOException)
        {
            return; // not allowed here (another user, Yama, a seccomp filter): the ring carries everything
        }
        if (probe == *(long*)(_peer + ProbeValueInSlot)) Volatile.Write(ref *(int*)(_peer + ReadableInSlot), 1);
    }

    /// <summary>
    /// Maps the segment of ranks <paramref name="self"/> and <paramref name="peer"/> of the job whose key is
    /// <paramref name="jobKey"/>, creating it if this rank is first; its rings give up waiting once
    /// <paramref name="closed"/> holds and tell <paramref name="sleeping"/> when they sleep.
    /// </summary>
    /// <exception cref="MpiException">Transport: the segment cannot be made or mapped, or is not PMPI's; the message names both ranks.</exception>
    public static PairSegment Open(string jobKey, int self, int peer, Func<bool> closed, Action? sleeping = null)
    {
        string name = SharedMemoryNames.Of(jobKey, Math.Min(self, peer), Math.Max(self, peer));
        try
        {
            return OperatingSystem.IsWindows() ? OpenWindows(name, self, peer, closed, sleeping) : OpenFile(name, self, peer, closed, sleeping);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or TimeoutException or InvalidDataException)
        {
            throw new MpiException(ErrorClass.Transport, $"Rank {self} cannot share memory with rank {peer} on this node: {e.Message}; run with --links network to use the network instead.", e);
        }
    }

    public void Dispose()
    {
        RemoveName();
        Outgoing.Dispose();
        Incoming.Dispose();
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
    }

    /// <summary>
    /// Removes the segment's name if the peer never mapped it: it will not now (this rank is ending). The memory
    /// stays mapped.
    /// </summary>
    public void RemoveName()
    {
        if (_path is not null && Volatile.Read(ref *(int*)(_start + MappedOffset)) < 2) File.Delete(_path);
    }

    private static long[] NewProbe()
    {
        var probe = GC.AllocateArray<long>(1, pinned: true);
        probe[0] = BitConverter.ToInt64(RandomNumberGenerator.GetBytes(sizeof(long))) | 1; // never 0, what an unwritten slot holds
        return probe;
    }

    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    private static PairSegment OpenFile(string name, int self, int peer, Func<bool> closed, Action? sleeping)
    {
        string path = Path.Combine(SharedMemoryNames.Directory, name);
        FileStream stream;
        bool created = false;
        // The first of the pair to come creates the file, the other opens it: looked for first, so that the second
        // does not learn it from an exception (a process's first costs it about 10 ms of CPU, in every rank's start),
        // and the creation still settles a race between the two.
        if (File.Exists(path)) stream = OpenExisting(path);
        else
        {
            try
            {
                stream = new FileStream(path, new FileStreamOptions
                {
                    Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite, Share = FileShare.ReadWrite,
                    UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
                });
                stream.SetLength(Size);
                created = true;
            }
            catch (IOException) when (File.Exists(path))
            {
                stream = OpenExisting(path);
            }
        }
        var file = MemoryMappedFile.CreateFromFile(stream, null, Size, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
        var segment = new PairSegment(file, path, self, peer, name, closed, sleeping);
        try
        {
            segment.Agree(created);
            // Both ranks have it mapped: the name can go, the memory stays until both unmap.
            if (Interlocked.Increment(ref *(int*)(segment._start + MappedOffset)) == 2) File.Delete(path);
            return segment;
        }
        catch
        {
            segment.Dispose();
            throw;
        }
    }

    private static FileStream OpenExisting(string path) => new(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);

    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private static PairSegment OpenWindows(string name, int self, int peer, Func<bool> closed, Action? sleeping)
    {
        var segment = new PairSegment(MemoryMappedFile.CreateOrOpen($"Local\\{name}", Size), path: null, self, peer, name, closed, sleeping);
        segment.Agree(created: Interlocked.Increment(ref *(int*)(segment._start + MappedOffset)) == 1);
        return segment;
    }

    /// <summary>The creator stamps the layout; the other rank waits for the stamp and checks it.</summary>
    private void Agree(bool created)
    {
        ref int magic = ref *(int*)(_start + MagicOffset);
        ref int capacity = ref *(int*)(_start + CapacityOffset);
        if (created)
        {
            capacity = RingCapacity;
            Volatile.Write(ref magic, Magic);
            return;
        }
        var waited = System.Diagnostics.Stopwatch.StartNew();
        // One read per round: the creator may stamp the magic number between two reads.
        for (int seen; (seen = Volatile.Read(ref magic)) != Magic;)
        {
            if (seen != 0) throw new InvalidDataException("the shared segment is not PMPI's (wrong magic number)");
            if (waited.Elapsed > OpenTimeout) throw new TimeoutException($"the peer made the shared segment but did not set it up within {OpenTimeout.TotalSeconds:0} s");
            Thread.Sleep(1);
        }
        if (capacity != RingCapacity) throw new InvalidDataException($"the peer's rings hold {capacity} bytes, this rank's {RingCapacity} (another PMPI version?)");
    }
}
