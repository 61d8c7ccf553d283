using System.Runtime.InteropServices;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// Sleeping on, and waking, a 32-bit word in memory that two processes map: what lets a rank waiting for a peer use
/// no CPU. Linux: a futex on the word itself (shared, since the mapping is), and futex_waitv to sleep on many at once.
/// Windows: a named auto-reset event per word, and WaitAny over them. Elsewhere: a short sleep, checked again.
/// </summary>
internal abstract unsafe partial class Doorbell : IDisposable
{
    /// <summary>The doorbell for the word <paramref name="name"/> names (the name matters on Windows only).</summary>
    public static Doorbell For(string name) =>
        OperatingSystem.IsLinux() ? new Futex() : OperatingSystem.IsWindows() ? new NamedEvent($"Local\\{name}") : new Sleep();

    /// <summary>A doorbell for a word only this process maps.</summary>
    public static Doorbell Local() =>
        OperatingSystem.IsLinux() ? new Futex() : OperatingSystem.IsWindows() ? new NamedEvent(name: null) : new Sleep();

    /// <summary>Sleeps while <paramref name="word"/> still holds <paramref name="expected"/>, at most <paramref name="timeout"/>.</summary>
    public abstract void Wait(int* word, int expected, TimeSpan timeout);

    /// <summary>Wakes whoever sleeps on <paramref name="word"/>.</summary>
    public abstract void Ring(int* word);

    /// <summary>
    /// Sleeps while every watched word still holds the value it was seen with, until one is rung or
    /// <paramref name="timeout"/> passes. Beyond what the platform waits on at once (128 futexes, 64 handles) it
    /// sleeps a millisecond instead, so the caller looks again soon.
    /// </summary>
    public static void WaitAny(ReadOnlySpan<Watch> watches, TimeSpan timeout)
    {
        foreach (var watch in watches)
        {
            if (Volatile.Read(ref *watch.Word) != watch.Expected) return;
        }
        bool slept = OperatingSystem.IsLinux() ? Futex.TryWaitAny(watches, timeout)
            : OperatingSystem.IsWindows() && NamedEvent.TryWaitAny(watches, timeout);
        if (!slept) Thread.Sleep(1);
    }

    public virtual void Dispose()
    {
    }

    /// <summary>A word to sleep on in <see cref="WaitAny"/>, the value it held when looked at, and its doorbell.</summary>
    public readonly struct Watch(Doorbell bell, int* word, int expected)
    {
        public Doorbell Bell { get; } = bell;

        public int* Word { get; } = word;

        public int Expected { get; } = expected;
    }

    private sealed partial class Futex : Doorbell
    {
        private const int Wait_ = 0, Wake = 1; // FUTEX_WAIT, FUTEX_WAKE: not the _PRIVATE forms, the word is shared
        private const long WaitvSyscall = 449; // futex_waitv (Linux 5.16), one number on every architecture
        private const int MaxWaitv = 128, Futex2Size32 = 2, ClockMonotonic = 1, NoSuchCall = 38; // ENOSYS

        private static readonly long SyscallNumber = RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => 202,
            Architecture.Arm64 => 98,
            var other => throw new PlatformNotSupportedException($"No futex syscall number known for {other}."),
        };

        private static bool s_noWaitv;

        public override void Wait(int* word, int expected, TimeSpan timeout)
        {
            var span = Timespec.Of(timeout);
            // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean: look again.
            _ = syscall(SyscallNumber, word, Wait_, expected, &span, null, 0);
        }

        public override void Ring(int* word) => _ = syscall(SyscallNumber, word, Wake, int.MaxValue, null, null, 0);

        public static bool TryWaitAny(ReadOnlySpan<Watch> watches, TimeSpan timeout)
        {
            if (watches.Length > MaxWaitv || Volatile.Read(ref s_noWaitv)) return false;
            var waiters = stackalloc FutexWaitv[watches.Length];
            for (int i = 0; i < watches.Length; i++)
                waiters[i] = new FutexWaitv { Value = (uint)watches[i].Expected, Address = (ulong)watches[i].Word, Flags = Futex2Size32 };
            // futex_waitv takes a deadline, not a duration.
            Timespec now;
            _ = clock_gettime(ClockMonotonic, &now);
            var deadline = Timespec.Of(TimeSpan.FromTicks(now.Seconds * TimeSpan.TicksPerSecond + now.Nanoseconds / 100) + timeout);
            if (syscall(WaitvSyscall, waiters, watches.Length, 0, &deadline, ClockMonotonic) < 0 && Marshal.GetLastPInvokeError() == NoSuchCall)
            {
                Volatile.Write(ref s_noWaitv, true); // a kernel before 5.16
                return false;
            }
            return true;
        }

        [LibraryImport("libc", SetLastError = true)]
        private static partial long syscall(long number, int* address, int operation, int value, Timespec* timeout, int* address2, int value3);

        [LibraryImport("libc", SetLastError = true)]
        private static partial long syscall(long number, FutexWaitv* waiters, int count, int flags, Timespec* deadline, int clock);

        [LibraryImport("libc")]
        private static partial int clock_gettime(int clock, Timespec* time);

        [StructLayout(LayoutKind.Sequential)]
        private struct Timespec
        {
            public long Seconds;
            public long Nanoseconds;

            public static Timespec Of(TimeSpan time) => new() { Seconds = time.Ticks / TimeSpan.TicksPerSecond, Nanoseconds = time.Ticks % TimeSpan.TicksPerSecond * 100 };
        }

        [StructLayout(LayoutKind.Sequential)]
        private struct FutexWaitv
        {
            public ulong Value;
            public ulong Address;
            public uint Flags;
            public uint Reserved;
        }
    }

    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private sealed class NamedEvent(string? name) : Doorbell
    {
        private readonly EventWaitHandle _event = new(false, EventResetMode.AutoReset, name);

        public override void Wait(int* word, int expected, TimeSpan timeout)
        {
            if (Volatile.Read(ref *word) == expected) _event.WaitOne(timeout);
        }

        public override void Ring(int* word) => _event.Set();

        public static bool TryWaitAny(ReadOnlySpan<Watch> watches, TimeSpan timeout)
        {
            if (watches.Length > 64) return false;
            var handles = new WaitHandle[watches.Length];
            for (int i = 0; i < handles.Length; i++) handles[i] = ((NamedEvent)watches[i].Bell)._event;
            WaitHandle.WaitAny(handles, timeout);
            return true;
        }

        public override void Dispose() => _event.Dispose();
    }

    private sealed class Sleep : Doorbell
    {
        public override void Wait(int* word, int expected, TimeSpan timeout)
        {
            if (Volatile.Read(ref *word) == expected) Thread.Sleep(1);
        }

        public override void Ring(int* word)
        {
        }
    }
}
