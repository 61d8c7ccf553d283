using System.Collections.Immutable;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using Pmpi.Matching;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// The one thread of a rank that reads its shared-memory links while no thread of the rank polls them: it reads
/// whatever arrives, spins briefly after, then sleeps on every incoming ring at once (<see cref="Doorbell.WaitAny"/>),
/// so a node of n ranks runs n readers, not n². While a waiting rank thread polls the links itself
/// (<see cref="IPolledLinks.Poll"/>), the reader stands down: it naps on a bell of its own without saying it sleeps
/// on the rings, so a peer's send rings no doorbell and wakes no second thread to contend for the rank's core. The
/// rank thread rings that bell when it stops polling to sleep (<see cref="IPolledLinks.Sleeping"/>); a rank thread
/// that simply went back to computing is noticed when the nap ends. Before that, a waiting rank thread sleeps on the
/// rings itself for a while (<see cref="SleepOn"/>), and the reader stays down.
/// </summary>
internal sealed unsafe class SharedMemoryReader : IPolledLinks, IDisposable
{
    // A partner on another core answers within microseconds.
    private static readonly long SpinTicks = SpinPolicy.Brief.Ticks;
    private static readonly TimeSpan NapSlice = TimeSpan.FromMilliseconds(2);
    private static readonly TimeSpan SleepSlice = TimeSpan.FromMilliseconds(500);
    // How long a waiting rank thread sleeps on the rings itself before it hands them to the reader: past the waits
    // of a busy node (a peer's copy of a large message, a core other ranks hold), short of a wait for a computation.
    private static readonly long RankSleepTicks = Stopwatch.Frequency / 100; // 10 ms

    private readonly MatchingEngine _engine;
    // The two words the bells ring, a cache line apart, on the pinned heap: a rank thread (Sleeping) or a completion
    // a rank thread once slept on (_wakeWaiters) may ring them after Dispose, while the rank's network links close,
    // so they live as long as anything refers to this reader, never freed under such a write.
    private const int WordStride = 16;
    private readonly int[] _words = GC.AllocateArray<int>(2 * WordStride, pinned: true);
    private readonly Doorbell _bell = Doorbell.Local();
    private readonly int* _bellWord;
    private readonly Doorbell _waiterBell = Doorbell.Local(); // rung when an operation a rank thread sleeps on completes
    private readonly int* _waiterWord;
    private readonly Action _wakeWaiters;
    private readonly Thread _thread;
    private ImmutableArray<SharedMemoryLink> _links = [];
    private int _polled; // 1 once a rank thread polls, 0 again when the reader looks: no clock read in a poll
    private int _napping;
    private volatile bool _stopping;

    public SharedMemoryReader(MatchingEngine engine)
    {
        _engine = engine;
        _bellWord = (int*)Unsafe.AsPointer(ref _words[0]);
        _waiterWord = (int*)Unsafe.AsPointer(ref _words[WordStride]);
        _thread = new Thread(Run) { IsBackground = true, Name = "PMPI shared memory" };
        _wakeWaiters = () =>
        {
            Interlocked.Increment(ref *_waiterWord);
            _waiterBell.Ring(_waiterWord);
        };
    }

    /// <summary>Whether this rank has any same-node peer to read.</summary>
    public bool HasLinks => !_links.IsEmpty;

    /// <summary>Reads <paramref name="links"/> from now on (the thread starts with the first).</summary>
    public void Add(IEnumerable<SharedMemoryLink> links)
    {
        ImmutableInterlocked.Update(ref _links, static (current, added) => current.AddRange(added), links);
        if (_thread.ThreadState.HasFlag(System.Threading.ThreadState.Unstarted)) _thread.Start();
        else Wake();
    }

    public void Poll()
    {
        // Read before written: a spinning thread polls millions of times a second, and the reader looks at most
        // once a nap, so the word's cache line stays with the poller.
        if (Volatile.Read(ref _polled) == 0) Volatile.Write(ref _polled, 1);
        foreach (var link in _links) link.Poll();
    }

    /// <summary>A ring's message is read by whoever polls, a piece at a time: no thread holds one the poller waits for.</summary>
    public bool Delivering => false;

    public void Sleeping()
    {
        Volatile.Write(ref _polled, 0);
        // Full fence, paired with the one in Nap: either this side sees the nap, or the nap sees the bell's count.
        Interlocked.Increment(ref *_bellWord);
        if (Volatile.Read(ref _napping) != 0) _bell.Ring(_bellWord);
    }

    /// <summary>
    /// Sleeps the waiting rank thread on the incoming rings, and on a bell its operation rings as it completes
    /// (completed by a network link's thread, an abort, another thread of the rank), for up to
    /// <see cref="RankSleepTicks"/>; it reads what arrives itself. Meanwhile the reader naps, as it does while the
    /// thread polls. A message then wakes one thread, where the reader would wake and then wake the rank thread.
    /// </summary>
    public bool SleepOn(Completion completion)
    {
        if (_links.IsEmpty) return false;
        completion.OnCompleted(_wakeWaiters);
        long start = Stopwatch.GetTimestamp();
        while (!completion.IsCompleted)
        {
            long left = RankSleepTicks - (Stopwatch.GetTimestamp() - start);
            if (left <= 0 || _stopping || _engine.AbortReason is not null) return false;
            int rung = Volatile.Read(ref *_waiterWord);
            Poll();
            if (!completion.IsCompleted) SleepUntilData(_waiterBell, _waiterWord, rung, Stopwatch.GetElapsedTime(0, left));
        }
        return true;
    }

    /// <summary>
    /// Stops the reader, then unmaps the links (each link's waits end first), unless the rank was aborted. The bells
    /// stay: they may still be rung (see <see cref="_words"/>), and a local bell holds at most an event handle, which
    /// the GC closes.
    /// </summary>
    public void Dispose()
    {
        _stopping = true;
        foreach (var link in _links) link.Close();
        Wake();
        // The mappings may go only once the reader no longer reads them; it gives up within a sleep slice. After an
        // abort, other threads may still touch the rings: a rank thread woken from its wait between a look at the
        // link and its read, an acknowledgement queued to the thread pool. The process is ending: they go with it.
        bool stopped = _thread.ThreadState.HasFlag(System.Threading.ThreadState.Unstarted) || _thread.Join(TimeSpan.FromSeconds(5));
        bool unmap = stopped && _engine.AbortReason is null;
        foreach (var link in _links)
        {
            if (unmap) link.Dispose();
            else link.Abandon();
        }
    }

    /// <summary>Wakes the reader from a nap or a sleep, so it looks at its links again.</summary>
    private void Wake()
    {
        Interlocked.Increment(ref *_bellWord);
        _bell.Ring(_bellWord);
    }

    private void Run()
    {
        var spinner = new SpinWait();
        long lastRead = 0;
        // Until the rank ends or is aborted (by a corrupt record among other things).
        while (!_stopping && _engine.AbortReason is null)
        {
            int rung = Volatile.Read(ref *_bellWord);
            long now = Stopwatch.GetTimestamp();
            // A rank thread that polled since the last look (at most a nap ago) is taken to be polling still.
            if (Volatile.Read(ref _polled) == 1 && Interlocked.Exchange(ref _polled, 0) == 1) Nap(rung);
            else if (ReadAny())
            {
                lastRead = now;
                spinner.Reset();
            }
            else if (now - lastRead < SpinTicks) spinner.SpinOnce(sleep1Threshold: -1);
            else SleepUntilData(_bell, _bellWord, rung, SleepSlice);
        }
    }

    private bool ReadAny()
    {
        bool read = false;
        foreach (var link in _links) read |= link.Poll();
        return read;
    }

    /// <summary>Sleeps on the bell alone while a rank thread polls: the rings are its.</summary>
    private void Nap(int rung)
    {
        Volatile.Write(ref _napping, 1);
        Interlocked.MemoryBarrier();
        _bell.Wait(_bellWord, rung, NapSlice);
        Volatile.Write(ref _napping, 0);
    }

    /// <summary>Sleeps on <paramref name="bell"/> and every incoming ring, said to sleep, until one is rung or <paramref name="slice"/> passes.</summary>
    private void SleepUntilData(Doorbell bell, int* word, int rung, TimeSpan slice)
    {
        var links = _links;
        var watches = new Doorbell.Watch[links.Length + 1];
        watches[0] = new Doorbell.Watch(bell, word, rung);
        for (int i = 0; i < links.Length; i++) watches[i + 1] = links[i].Incoming.SleepUntilData();
        try
        {
            // Looked at again after saying so: a write between the last read and here has rung or changed a signal.
            // Data this reader did not read is another thread's, in the middle of reading it: let that thread run.
            if (links.Any(link => link.Incoming.HasData)) Thread.Yield();
            else Doorbell.WaitAny(watches, slice);
        }
        finally
        {
            foreach (var link in links) link.Incoming.AwakeForData();
        }
    }
}
