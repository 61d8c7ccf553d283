using System.CommandLine;
using System.Net;
using System.Runtime.InteropServices;
using Grpc.Core;
using Microsoft.Extensions.Options;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Hosting;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi run job.xml`, or mpirun's form `pmpi run [-n N] program [args]`: submits a computation and streams its
/// output, each line tagged [rank] unless --no-tag-output. Without --master an agent and master start in this
/// process (the embedded default), accepting only requests signed with a secret of this process; with --master the
/// cluster credential (--credentials or PMPI_CREDENTIALS) or --insecure says how to reach it. Inside a Slurm
/// allocation, mpirun's form runs on agents srun starts on the allocation's nodes instead (<see cref="SlurmAgents"/>).
/// The exit code is the job's (see JobRun), 2 when the
/// computation or the options are invalid, or 130/143 when SIGINT/SIGTERM aborted the job.
/// </summary>
internal static class RunCommand
{
    private const int InvalidComputationExitCode = 2;

    public static Command Create()
    {
        var options = new RunOptions();
        var command = options.CreateCommand();
        command.SetAction(async (parse, cancellationToken) =>
        {
            // The embedded agent and master, with no credential, accept only requests signed with a secret that
            // exists in this process's memory alone.
            var masterText = parse.GetValue(options.Master);
            if (options.Security.Resolve(parse, "run", masterText is null ? RpcSecurity.ForThisProcess : null, out var error) is not { } rpcSecurity)
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
            // The embedded agent and master; a --master of their own has its own options.
            var embedded = new AgentOptions
            {
                HeartbeatTimeout = TimeSpan.FromSeconds(parse.GetValue(options.HeartbeatTimeout)),
                RegistrationTimeout = TimeSpan.FromSeconds(parse.GetValue(options.RegisterTimeout)),
                Security = rpcSecurity,
            };
            if (parse.GetValue(options.TagOutput) && parse.GetValue(options.NoTagOutput))
            {
                await Console.Error.WriteLineAsync("pmpi run: give --tag-output or --no-tag-output, not both.").ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            bool showRoutes = parse.GetValue(options.ShowRoutes);
            (SlurmAllocation Allocation, Func<IReadOnlyList<(string Name, string Agent, int Slots)>, string> Build)? slurm = null;
            var (fileName, xml, refusal) = await RunTarget.ReadAsync(parse, options, masterAddress, embedded, showRoutes, System.Environment.GetEnvironmentVariable,
                (allocation, build) => slurm = (allocation, build), cancellationToken).ConfigureAwait(false);
            if (refusal is not null)
            {
                await Console.Error.WriteLineAsync(refusal).ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            // Inside a Slurm allocation the ranks run on its nodes, on agents srun starts for this run; the first is master.
            SlurmAgents? agents = null;
            if (slurm is { } inAllocation && !showRoutes)
            {
                // The caller's credential (Resolve has loaded it once already), else one made for this run.
                var given = ClusterCredentials.LoadFromOptionOrEnvironment(parse.GetValue(options.Security.Credentials));
                (agents, var agentsError) = await SlurmAgents.StartAsync(inAllocation.Allocation, given, parse.GetValue(options.HeartbeatTimeout),
                    parse.GetValue(options.RegisterTimeout), cancellationToken).ConfigureAwait(false);
                if (agents is null)
                {
                    await Console.Error.WriteLineAsync(agentsError).ConfigureAwait(false);
                    return 1;
                }
                masterAddress = agents.Master;
                rpcSecurity = agents.Security;
                xml = inAllocation.Build(agents.Nodes);
            }
            await using var stopAgents = agents;
            bool networkLinks = parse.GetValue(options.Links) == "network";
            Func<string, string> describe = RunOptions.IsComputationFile(parse.GetValue(options.Target)!) ? message => message : message => RunTarget.Unlocated(message, fileName);
            if (showRoutes) return ShowRoutes(fileName, xml, rpcSecurity.Scheme, networkLinks, describe);
            if (masterAddress is null) embedded.RankZeroInput = StandardInput.ForRankZero();
            try
            {
                var request = new SubmitRequest
                {
                    FileName = fileName, ComputationXml = xml, NetworkLinks = networkLinks, Unbound = parse.GetValue(options.BindTo) == "none",
                    ReportBindings = parse.GetValue(options.ReportBindings),
                };
                return await RunAsync(request, masterAddress, rpcSecurity, embedded, !parse.GetValue(options.NoTagOutput), parse.GetValue(options.Stage), describe, cancellationToken).ConfigureAwait(false);
            }
            catch (OptionsValidationException e)
            {
                foreach (var failure in e.Failures) await Console.Error.WriteLineAsync($"pmpi run: {failure}").ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
        });
        return command;
    }

    /// <param name="stageAll">Ship every group's program (--stage), not only those marked stage="true" (<see cref="ProgramStaging"/>).</param>
    /// <param name="describe">Puts the master's errors about the computation in the user's terms (see <see cref="RunTarget.Unlocated"/>).</param>
    private static async Task<int> RunAsync(SubmitRequest request, Uri? master, RpcSecurity security, AgentOptions embeddedOptions, bool tagOutput,
        bool stageAll, Func<string, string> describe, CancellationToken cancellationToken)
    {
        using var interruption = new Interruption(cancellationToken);
        await using var embedded = master is null ? await AgentHost.StartAsync(IPAddress.Loopback, 0, embeddedOptions, interruption.Token).ConfigureAwait(false) : null;
        using var jobControl = JobControl.For(embedded);
        // A master that stops answering pings for the heartbeat timeout (stopped or frozen) ends the submission.
        var liveness = new RpcOptions { PingDelay = TimeSpan.FromSeconds(1), PingTimeout = embeddedOptions.HeartbeatTimeout };
        var address = master ?? embedded!.Address;
        using var channel = RpcChannels.For(address, security, liveness);
        var progress = new ProgressReporter();
        var output = new RankOutputWriter(tagOutput);
        try
        {
            if (await ProgramStaging.ShipAsync(request, stageAll, channel, address, interruption.Token).ConfigureAwait(false) is { } stagingError)
            {
                await Console.Error.WriteLineAsync(describe(stagingError)).ConfigureAwait(false);
                return InvalidComputationExitCode;
            }
            using var call = new Master.MasterClient(channel).Submit(request, cancellationToken: interruption.Token);
            await foreach (var item in call.ResponseStream.ReadAllAsync(interruption.Token).ConfigureAwait(false))
            {
                switch (item.BodyCase)
                {
                    case JobEvent.BodyOneofCase.Progress:
                        progress.Report(item.Progress);
                        break;
                    case JobEvent.BodyOneofCase.Output:
                        await output.WriteAsync(item.Output).ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Exited when item.Exited.Killed:
                        await Console.Error.WriteLineAsync($"pmpi: rank {item.Exited.Rank} was killed (the job is aborting)").ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Exited when item.Exited.ExitCode != 0:
                        await Console.Error.WriteLineAsync($"pmpi: rank {item.Exited.Rank} exited with code {item.Exited.ExitCode}").ConfigureAwait(false);
                        break;
                    case JobEvent.BodyOneofCase.Finished:
                        await output.EndAsync().ConfigureAwait(false);
                        await Console.Error.WriteLineAsync($"pmpi: {item.Finished.Summary}").ConfigureAwait(false);
                        // The embedded agent stops on the signal too, and may report the job it ended first, even before
                        // this process's own handler has noted the signal (the host's handler may run first).
                        if (interruption.Signal is null && embedded is { ShutdownRequested: true }) await interruption.WaitAsync(SignalNoteWait).ConfigureAwait(false);
                        return interruption.Signal is { } signal ? await InterruptedAsync(signal).ConfigureAwait(false) : item.Finished.ExitCode;
                }
            }
            await output.EndAsync().ConfigureAwait(false);
            await Console.Error.WriteLineAsync("pmpi: the master ended the job without a result.").ConfigureAwait(false);
            return 1;
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException && interruption.Signal is { } signal)
        {
            // Ending the submission aborts the job: the master has the agents kill its ranks (the embedded agent's
            // are killed as it stops, below).
            return await InterruptedAsync(signal).ConfigureAwait(false);
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.InvalidArgument)
        {
            await Console.Error.WriteLineAsync(describe(e.Status.Detail)).ConfigureAwait(false);
            return InvalidComputationExitCode;
        }
        catch (RpcException e)
        {
            await Console.Error.WriteLineAsync(RpcFailures.Unreached(e, address) is { } why
                ? $"pmpi: cannot reach the master: {why}."
                : $"pmpi: the job failed at master {address}: {e.StatusCode}: {e.Status.Detail}").ConfigureAwait(false);
            return 1;
        }
    }

    /// <summary>How long a job the stopping embedded agent ended waits for the signal that stopped it to be noted.</summary>
    private static readonly TimeSpan SignalNoteWait = TimeSpan.FromSeconds(2);

    private static async Task<int> InterruptedAsync(PosixSignal signal)
    {
        await Console.Error.WriteLineAsync($"pmpi: interrupted by {signal}; the job is aborted and its ranks killed.").ConfigureAwait(false);
        return Interruption.ExitCodeOf(signal);
    }

    /// <summary>
    /// Prints every pair's route (stdout, one line per ordered pair: "0 (node, domain) -> 1 (node, domain): direct").
    /// It comes from the rank table the master would build (<see cref="RankTableLayout"/>) and the ranks' own resolver
    /// (<see cref="JobRoutes"/>); placement depends only on the computation, so these are the routes the ranks will use.
    /// Gateways are shown with <paramref name="gatewayScheme"/>, as the master would dial them (https with a credential);
    /// ranks of one node share memory unless <paramref name="networkLinks"/>. <paramref name="describe"/> puts errors in the user's terms.
    /// </summary>
    private static int ShowRoutes(string fileName, string xml, string gatewayScheme, bool networkLinks, Func<string, string> describe)
    {
        ComputationDefinition computation;
        try
        {
            computation = ComputationFile.Parse(xml, fileName);
        }
        catch (ComputationFileException e)
        {
            Console.Error.WriteLine(describe(e.Message));
            return InvalidComputationExitCode;
        }
        var table = RankTableLayout.Build(computation, Placement.Assign(computation), gatewayScheme);
        table.NetworkLinks = networkLinks;
        var routes = JobRoutes.FromTable(table);
        Console.Error.WriteLine($"pmpi: routes of computation '{computation.Name}' ({routes.Size} ranks), not run:");
        for (int from = 0; from < routes.Size; from++)
        {
            for (int to = 0; to < routes.Size; to++)
            {
                try
                {
                    Console.Out.WriteLine($"{Describe(routes[from])} -> {Describe(routes[to])}: {routes.Resolve(from, to)}");
                }
                catch (RouteException e)
                {
                    Console.Error.WriteLine($"pmpi: {e.Message}");
                    return InvalidComputationExitCode;
                }
            }
        }
        return 0;

        static string Describe(RankPlace rank) => rank.Domain.Length == 0 ? $"{rank.Rank} ({rank.Node})" : $"{rank.Rank} ({rank.Node}, {rank.Domain})";
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

        /// <summary>Waits until a signal arrives (or the caller's token is cancelled), at most <paramref name="timeout"/>.</summary>
        public async Task WaitAsync(TimeSpan timeout)
        {
            try
            {
                await Task.Delay(timeout, _cancel.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // A signal (or the caller) cancelled the wait: what it waited for.
            }
        }

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
