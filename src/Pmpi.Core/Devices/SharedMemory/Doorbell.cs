using System.Runtime.InteropServices;

namespace Pmpi.Devices.SharedMemory;

/// <summary>
/// Sleeping on, and waking, a 32-bit word in memory that two processes map: what lets a rank waiting for a peer use
/// no CPU. Linux: a futex on the word itself (shared, since the mapping is). Windows: a named auto-reset event per
/// word. Elsewhere: a short sleep, checked again.
/// </summary>
internal abstract unsafe class Doorbell : IDisposable
{
    /// <summary>The doorbell for the word <paramref name="name"/> names (the name matters on Windows only).</summary>
    public static Doorbell For(string name) =>
        OperatingSystem.IsLinux() ? new Futex() : OperatingSystem.IsWindows() ? new NamedEvent(name) : new Sleep();

    /// <summary>Sleeps while <paramref name="word"/> still holds <paramref name="expected"/>, at most <paramref name="timeout"/>.</summary>
    public abstract void Wait(int* word, int expected, TimeSpan timeout);

    /// <summary>Wakes whoever sleeps on <paramref name="word"/>.</summary>
    public abstract void Ring(int* word);

    public virtual void Dispose()
    {
    }

    private sealed class Futex : Doorbell
    {
        private const int Wait_ = 0, Wake = 1; // FUTEX_WAIT, FUTEX_WAKE: not the _PRIVATE forms, the word is shared

        private static readonly long SyscallNumber = RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => 202,
            Architecture.Arm64 => 98,
            var other => throw new PlatformNotSupportedException($"No futex syscall number known for {other}."),
        };

        public override void Wait(int* word, int expected, TimeSpan timeout)
        {
            var span = new Timespec { Seconds = (long)timeout.TotalSeconds, Nanoseconds = timeout.Milliseconds * 1_000_000L };
            // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean: look again.
            _ = syscall(SyscallNumber, word, Wait_, expected, &span, null, 0);
        }

        public override void Ring(int* word) => _ = syscall(SyscallNumber, word, Wake, int.MaxValue, null, null, 0);

        [DllImport("libc", SetLastError = true)]
        private static extern long syscall(long number, int* address, int operation, int value, Timespec* timeout, int* address2, int value3);

        [StructLayout(LayoutKind.Sequential)]
        private struct Timespec
        {
            public long Seconds;
            public long Nanoseconds;
        }
    }

    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private sealed class NamedEvent(string name) : Doorbell
    {
        private readonly EventWaitHandle _event = new(false, EventResetMode.AutoReset, $"Local\\{name}");

        public override void Wait(int* word, int expected, TimeSpan timeout)
        {
            if (Volatile.Read(ref *word) == expected) _event.WaitOne(timeout);
        }

        public override void Ring(int* word) => _event.Set();

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
