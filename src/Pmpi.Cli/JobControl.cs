using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Pmpi.Agent.Hosting;

namespace Pmpi.Cli;

/// <summary>
/// The shell's job control for `pmpi run`. With the embedded agent, Ctrl-Z (SIGTSTP), and a read or write of the
/// terminal from the background (SIGTTIN, SIGTTOU), suspend the whole job: the ranks stop first, then `pmpi run`
/// stops itself, so the shell reports it stopped; `fg` or `bg` (SIGCONT) lets the ranks go on. Stopping `pmpi run`
/// alone would stop the agent that reads the ranks' heartbeats, and the ranks would end themselves. A job run through
/// a master is not suspended: its ranks run on other machines, and a submitter that stopped answering would make the
/// master abort the job, so `pmpi run` stays running and says so.
/// </summary>
internal sealed partial class JobControl : IDisposable
{
    private const int SigStop = 19; // Linux

    private readonly AgentHost? _embedded;
    private readonly PosixSignalRegistration[] _registrations;

    [SupportedOSPlatform("linux")]
    private JobControl(AgentHost? embedded)
    {
        _embedded = embedded;
        _registrations = embedded is null
            ? [PosixSignalRegistration.Create(PosixSignal.SIGTSTP, Refuse)]
            : [PosixSignalRegistration.Create(PosixSignal.SIGTSTP, Suspend), PosixSignalRegistration.Create(PosixSignal.SIGTTIN, Suspend),
                PosixSignalRegistration.Create(PosixSignal.SIGTTOU, Suspend), PosixSignalRegistration.Create(PosixSignal.SIGCONT, Continue)];
    }

    /// <summary>Job control for a job that <paramref name="embedded"/> runs, or a master does (null); on Linux (Windows has no job control).</summary>
    public static JobControl? For(AgentHost? embedded) => OperatingSystem.IsLinux() ? new JobControl(embedded) : null;

    public void Dispose()
    {
        foreach (var registration in _registrations) registration.Dispose();
    }

    private void Suspend(PosixSignalContext context)
    {
        context.Cancel = true;
        _embedded!.SuspendRanks();
        // Only Ctrl-Z writes: from the background a write could itself stop the process (SIGTTOU) before it suspends.
        if (context.Signal == PosixSignal.SIGTSTP) Console.Error.WriteLine("pmpi: job suspended, its ranks stopped; `fg` or `bg` continues it.");
        _ = Kill(System.Environment.ProcessId, SigStop);
    }

    private void Continue(PosixSignalContext context) => _embedded!.ContinueRanks();

    private static void Refuse(PosixSignalContext context)
    {
        context.Cancel = true;
        Console.Error.WriteLine("pmpi: a job run through a master cannot be suspended; it goes on (Ctrl-C aborts it).");
    }

    [LibraryImport("libc", EntryPoint = "kill")]
    private static partial int Kill(int processId, int signal);
}
