using System.CommandLine;
using System.Net;
using System.Runtime.InteropServices;
using System.Xml.Linq;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Services;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi run job.xml` or `pmpi run -n 4 app.dll [args]`: submits a computation and streams its output, each line
/// tagged [rank]. Without --master an agent and master start in this process (the embedded default), accepting only
/// requests signed with a secret of this process; with --master the cluster credential (--credentials or
/// PMPI_CREDENTIALS) or --insecure says how to reach it. The exit code is the job's (see JobRun), 2 when the
/// computation or the options are invalid, or 130/143 when SIGINT/SIGTERM aborted the job.
/// </summary>
internal static class RunCommand
{
    private const int InvalidComputationExitCode = 2;

    public static Command Create()
    {
        var target = new Argument<string>("target") { Description = "A computation file (.xml), or with -n a rank program (.dll or executable)." };
        var programArguments = new Argument<string[]>("arguments") { Description = "Arguments for the rank program (with -n).", Arity = ArgumentArity.ZeroOrMore };
        var ranks = new Option<int?>("-n", "--ranks") { Description = "Run the program given as target on this many ranks (SPMD)." };
        var master = new Option<string?>("--master")
        {
            Description = "Submit to the master of a running agent (host:port, or https://host:port) instead of an embedded one.",
        };
        var security = new SecurityOptions();
        var command = new Command("run", "Run a computation and stream its output.") { target, programArguments, ranks, master };
        security.AddTo(command);
        command.SetAction(async (parse, cancellationToken) =>
        {
            // The embedded agent and master, with no credential, accept only requests signed with a secret that
            // exists in this process's memory alone.
            var masterText = parse.GetValue(master);
            if (security.Resolve(parse, "run", masterText is null ? RpcSecurity.ForThisProcess : null, out var error) is not { } rpcSecurity)
            {
                await Console.Error.WriteLineAsync(error).ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            // --insecure is for reaching an agent that runs without a credential; the embedded one never needs it.
            if (masterText is null && rpcSecurity == RpcSecurity.Insecure) rpcSecurity = RpcSecurity.ForThisProcess();
            Uri? masterAddress = null;
            if (masterText is not null && (masterAddress = AgentAddress.TryParse(masterText, rpcSecurity)) is null)
            {
                await Console.Error.WriteLineAsync($"pmpi run: '{masterText}' is not an agent address: expected host:port or https://host:port.").ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            if (masterAddress is not null && masterAddress.Scheme != rpcSecurity.Scheme)
            {
                await Console.Error.WriteLineAsync($"pmpi run: {masterAddress} is {masterAddress.Scheme}, but {rpcSecurity.Description} speaks {rpcSecurity.Scheme}: "
                    + "give the address as host:port, or --insecure for an agent that runs without a credential.").ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            return await RunAsync(parse.GetValue(target)!, parse.GetValue(programArguments) ?? [], parse.GetValue(ranks), masterAddress, rpcSecurity, cancellationToken).ConfigureAwait(false);
        });
        return command;
    }

    private static async Task<int> RunAsync(string target, string[] programArguments, int? ranks, Uri? master, RpcSecurity security, CancellationToken cancellationToken)
    {
        string fileName, xml;
        if (ranks is { } count)
        {
            fileName = Path.GetFullPath("pmpi-run.xml");
            xml = SpmdComputation(Path.GetFullPath(target), count, programArguments);
        }
        else
        {
            fileName = Path.GetFullPath(target);
            if (!File.Exists(fileName))
            {
                await Console.Error.WriteLineAsync($"pmpi: computation file '{target}' does not exist.").ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            xml = await File.ReadAllTextAsync(fileName, cancellationToken).ConfigureAwait(false);
        }

        using var interruption = new Interruption(cancellationToken);
        await using var embedded = master is null
            ? await AgentHost.StartAsync(IPAddress.Loopback, 0, new AgentOptions { Security = security }, interruption.Token).ConfigureAwait(false)
            : null;
        using var channel = new RpcChannel(master ?? embedded!.Address, security: security);
        var progress = new ProgressReporter();
        try
        {
            var request = new SubmitRequest { FileName = fileName, ComputationXml = xml };
            await foreach (var item in channel.ServerStreamingAsync<SubmitRequest, JobEvent>(ServicePaths.Submit, request, cancellationToken: interruption.Token).ConfigureAwait(false))
            {
                switch (item.BodyCase)
                {
                    case JobEvent.BodyOneofCase.Progress:
                        progress.Report(item.Progress);
                        break;
                    case JobEvent.BodyOneofCase.Output:
                        var writer = item.Output.IsError ? Console.Error : Console.Out;
                        await writer.WriteLineAsync($"[{item.Output.Rank}] {item.Output.Line}").ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Exited when item.Exited.Killed:
                        await Console.Error.WriteLineAsync($"pmpi: rank {item.Exited.Rank} was killed (the job is aborting)").ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Exited when item.Exited.ExitCode != 0:
                        await Console.Error.WriteLineAsync($"pmpi: rank {item.Exited.Rank} exited with code {item.Exited.ExitCode}").ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Finished:
                        await Console.Error.WriteLineAsync($"pmpi: {item.Finished.Summary}").ConfigureAwait(false);
                        return item.Finished.ExitCode;
                }
            }
            await Console.Error.WriteLineAsync("pmpi: the master ended the job without a result.").ConfigureAwait(false);
            return 1;
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException && interruption.Signal is { } signal)
        {
            // Ending the submission aborts the job: the master has the agents kill its ranks (the embedded agent's
            // are killed as it stops, below).
            await Console.Error.WriteLineAsync($"pmpi: interrupted by {signal}; the job is aborted and its ranks killed.").ConfigureAwait(false);
            return Interruption.ExitCodeOf(signal);
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.InvalidArgument)
        {
            await Console.Error.WriteLineAsync(e.Detail).ConfigureAwait(false);
            return InvalidComputationExitCode;
        }
        catch (RpcException e)
        {
            await Console.Error.WriteLineAsync($"pmpi: {e.Message}").ConfigureAwait(false);
            return 1;
        }
    }

    /// <summary>The computation `-n N program args` stands for: one group of N ranks on the embedded agent.</summary>
    private static string SpmdComputation(string program, int count, string[] arguments)
    {
        XNamespace ns = ComputationFile.Namespace;
        var ranks = new XElement(ns + "ranks", new XAttribute("program", program), new XAttribute("count", count),
            arguments.Select(argument => new XElement(ns + "arg", argument)));
        return new XDocument(new XElement(ns + "computation", new XAttribute("name", Path.GetFileNameWithoutExtension(program)), ranks)).ToString();
    }

    /// <summary>
    /// Turns SIGINT and SIGTERM into cancellation. `pmpi run` must watch them itself: the embedded agent's web host
    /// claims both signals without ending the process, so without this `pmpi run` would ignore a plain `kill`.
    /// </summary>
    private sealed class Interruption : IDisposable
    {
        private readonly CancellationTokenSource _cancel;
        private readonly PosixSignalRegistration[] _registrations;
        private PosixSignal? _signal;

        public Interruption(CancellationToken cancellationToken)
        {
            _cancel = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            _registrations = [PosixSignalRegistration.Create(PosixSignal.SIGINT, Handle), PosixSignalRegistration.Create(PosixSignal.SIGTERM, Handle)];
        }

        /// <summary>Cancelled by either signal (or by the caller's token).</summary>
        public CancellationToken Token => _cancel.Token;

        /// <summary>The signal that arrived first, if one did.</summary>
        public PosixSignal? Signal => _signal;

        /// <summary>The shell convention for a process ended by a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM).</summary>
        public static int ExitCodeOf(PosixSignal signal) => signal == PosixSignal.SIGINT ? 130 : 143;

        public void Dispose()
        {
            foreach (var registration in _registrations) registration.Dispose();
            _cancel.Dispose();
        }

        private void Handle(PosixSignalContext context)
        {
            // The process ends once the job is aborted and the ranks are gone, not at once.
            context.Cancel = true;
            _signal ??= context.Signal;
            _cancel.Cancel();
        }
    }

    /// <summary>Prints a progress line on stderr when a phase completes: all launched, all registered (running).</summary>
    private sealed class ProgressReporter
    {
        private bool _launched, _registered;

        public void Report(Progress progress)
        {
            if (!_launched && progress.Launched == progress.Size)
            {
                _launched = true;
                Console.Error.WriteLine($"pmpi: job {progress.JobId}: {progress.Size} ranks launched");
            }
            if (!_registered && progress.Registered == progress.Size)
            {
                _registered = true;
                Console.Error.WriteLine($"pmpi: job {progress.JobId}: {progress.Size} ranks registered, running");
            }
        }
    }
}
