using System.Collections.Immutable;
using System.Diagnostics;
using System.Security.Cryptography;
using System.Threading.Channels;
using Pmpi.Agent.Computation;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Services;

/// <summary>
/// One computation from submission to end. Exit code rule (what `pmpi run` returns): 0 when every rank exits 0;
/// otherwise the code of the first rank that failed (its exit code, or its Abort code); 124 when the computation's
/// timeout passes; 1 when an agent is lost or a rank cannot be launched. The abort that follows the first failure
/// kills every other rank through its agent; those exits are reported but change nothing.
/// </summary>
internal sealed class JobRun
{
    public const int TimeoutExitCode = 124;

    /// <summary>How long an abort waits for an agent to confirm its ranks are gone before abandoning its launch.</summary>
    private static readonly TimeSpan KillGrace = TimeSpan.FromSeconds(3);

    private readonly ComputationDefinition _computation;
    private readonly Uri _master;
    private readonly Uri _localAgent;
    private readonly Channel<JobEvent> _events = Channel.CreateUnbounded<JobEvent>(new UnboundedChannelOptions { SingleReader = true });
    private readonly ImmutableArray<RankAssignment> _placement;
    private readonly RankTable _layout; // every rank's place; registration adds the endpoints
    private readonly RankEntry?[] _table;
    private readonly TaskCompletionSource<RankTable> _tableReady = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _end = new();
    private readonly Lock _lock = new();
    private (int Rank, int Code, string Reason)? _failure;
    private int _launched, _registered, _exited;

    public JobRun(ComputationDefinition computation, Uri master, Uri localAgent)
    {
        _computation = computation;
        _master = master;
        _localAgent = localAgent;
        _placement = Placement.Assign(computation);
        _layout = RankTableLayout.Build(computation, _placement);
        _table = new RankEntry?[computation.WorldSize];
        Id = $"{computation.Name}-{Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(4))}";
        Token = Convert.ToBase64String(RandomNumberGenerator.GetBytes(24));
    }

    public string Id { get; }

    /// <summary>The job's secret: ranks present it to register and to open streams to each other.</summary>
    public string Token { get; }

    private int Size => _table.Length;

    public async Task RunAsync(MessageWriter<JobEvent> responses, CancellationToken submitterGone)
    {
        var clock = Stopwatch.StartNew();
        using var registration = submitterGone.Register(() => Fail(-1, 1, "the submitter went away"));
        using var timeout = _computation.Timeout is { } limit
            ? new Timer(_ => Fail(-1, TimeoutExitCode, $"the computation's timeout of {limit} passed"), null, limit, Timeout.InfiniteTimeSpan)
            : null;
        var pump = PumpAsync(responses, submitterGone);
        Progress();

        var launches = _placement
            .GroupBy(assignment => assignment.Node is { } node ? new Uri($"http://{node.Agent}") : _localAgent)
            .Select(group => LaunchAsync(group.Key, [.. group]))
            .ToList();
        await Task.WhenAll(launches).ConfigureAwait(false);

        var failure = _failure;
        var finished = new JobFinished
        {
            ExitCode = failure?.Code ?? 0,
            FailedRank = failure?.Rank ?? -1,
            Summary = failure switch
            {
                null => $"Job {Id}: {Size} ranks finished in {clock.Elapsed.TotalSeconds:F2} s.",
                { Rank: >= 0 } f => $"Job {Id} aborted after {clock.Elapsed.TotalSeconds:F2} s: rank {f.Rank} failed (exit code {f.Code}): {f.Reason}.",
                { } f => $"Job {Id} aborted after {clock.Elapsed.TotalSeconds:F2} s (exit code {f.Code}): {f.Reason}.",
            },
        };
        _events.Writer.TryWrite(new JobEvent { Finished = finished });
        _events.Writer.TryComplete();
        await pump.ConfigureAwait(false);
    }

    /// <summary>
    /// Records a rank's endpoint beside its place from the computation; answers once every rank has registered. A
    /// rank whose agent serves another domain than the computation places its node in is refused and fails the job:
    /// its routes would be wrong.
    /// </summary>
    public async Task<RankTable> RegisterAsync(RegisterRequest request, CancellationToken cancellationToken)
    {
        if ((uint)request.Rank >= (uint)Size) throw new RpcException(StatusCode.InvalidArgument, $"Rank {request.Rank} is not in job {Id} of {Size} ranks.");
        var entry = _layout.Ranks[request.Rank].Clone();
        entry.Endpoint = request.Endpoint;
        if (request.Domain.Length > 0 && entry.Domain.Length > 0 && request.Domain != entry.Domain)
        {
            var reason = $"rank {request.Rank} runs on node '{entry.Node}', whose agent serves domain '{request.Domain}', but the computation places that node in domain '{entry.Domain}'";
            Fail(request.Rank, 1, reason);
            throw new RpcException(StatusCode.FailedPrecondition, $"Job {Id}: {reason}.");
        }
        lock (_lock)
        {
            if (_table[request.Rank] is not null) throw new RpcException(StatusCode.FailedPrecondition, $"Rank {request.Rank} of job {Id} registered twice.");
            _table[request.Rank] = entry;
            if (++_registered == Size)
            {
                var table = new RankTable { Reach = { _layout.Reach } };
                table.Ranks.AddRange(_table!);
                _tableReady.TrySetResult(table);
            }
        }
        Progress();
        return await _tableReady.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Ends the job because of <paramref name="rank"/> (-1: not a rank); the first failure is the one reported.</summary>
    public void Fail(int rank, int code, string reason)
    {
        lock (_lock)
        {
            if (_failure is not null || _end.IsCancellationRequested) return;
            _failure = (rank, code == 0 ? 1 : code, reason);
        }
        _tableReady.TrySetException(new RpcException(StatusCode.Aborted, $"Job {Id} was aborted: {reason}."));
        _end.Cancel();
    }

    private async Task LaunchAsync(Uri agent, IReadOnlyList<RankAssignment> ranks)
    {
        var request = new LaunchRequest { JobId = Id, JobToken = Token, WorldSize = Size, MasterAddress = _master.ToString() };
        foreach (var assignment in ranks)
        {
            var launch = new RankLaunch { Rank = assignment.WorldRank, Program = assignment.Group.ProgramPath, WorkingDirectory = assignment.Group.WorkingDirectory };
            launch.Arguments.AddRange(assignment.Group.Arguments);
            launch.Environment.Add(assignment.Group.Environment);
            request.Ranks.Add(launch);
        }
        // Another node's launch may have failed already: start nothing for a job that is over.
        if (_end.IsCancellationRequested) return;
        int remaining = ranks.Count;
        using var channel = new RpcChannel(agent);
        using var abandon = new CancellationTokenSource();
        Task? kill = null;
        try
        {
            // On abort the agent is asked to kill this node's ranks while the launch is still read: it then reports
            // their exits and ends, so the job finishes only once its ranks are gone.
            using var onEnd = _end.Token.Register(() => Volatile.Write(ref kill, KillAsync(channel, abandon)));
            await foreach (var item in channel.ServerStreamingAsync<LaunchRequest, LaunchEvent>(ServicePaths.Launch, request, cancellationToken: abandon.Token).ConfigureAwait(false))
            {
                switch (item.BodyCase)
                {
                    case LaunchEvent.BodyOneofCase.Started:
                        Interlocked.Increment(ref _launched);
                        Progress();
                        break;
                    case LaunchEvent.BodyOneofCase.Output:
                        _events.Writer.TryWrite(new JobEvent { Output = item.Output });
                        break;
                    case LaunchEvent.BodyOneofCase.Exited:
                        remaining--;
                        Interlocked.Increment(ref _exited);
                        _events.Writer.TryWrite(new JobEvent { Exited = item.Exited });
                        if (item.Exited.ExitCode != 0)
                            Fail(item.Exited.Rank, item.Exited.ExitCode, item.Exited.Killed ? "its agent killed it" : $"its process exited with code {item.Exited.ExitCode}");
                        break;
                    case LaunchEvent.BodyOneofCase.Stopping:
                        Fail(-1, 1, $"the agent at {agent.Authority} stopped: {item.Stopping.Reason}");
                        break;
                }
            }
            if (remaining > 0) Fail(-1, 1, $"the agent at {agent.Authority} ended the launch with {remaining} ranks unaccounted for");
        }
        catch (OperationCanceledException) when (abandon.IsCancellationRequested)
        {
            // The agent did not confirm the kill in time; cancelling the launch makes it kill the ranks by itself.
        }
        catch (RpcException e) when (_end.IsCancellationRequested && e.StatusCode is StatusCode.Cancelled or StatusCode.DeadlineExceeded or StatusCode.Unavailable)
        {
        }
        catch (RpcException e)
        {
            Fail(-1, 1, $"the agent at {agent.Authority} failed: {e.Detail}");
        }
        if (Volatile.Read(ref kill) is { } pending) await pending.ConfigureAwait(false);
    }

    /// <summary>Asks an agent to kill the job's ranks; gives up on its launch after <see cref="KillGrace"/> either way.</summary>
    private async Task KillAsync(RpcChannel channel, CancellationTokenSource abandon)
    {
        abandon.CancelAfter(KillGrace);
        try
        {
            await channel.UnaryAsync<KillRequest, KillReply>(ServicePaths.Kill, new KillRequest { JobId = Id, JobToken = Token }, KillGrace).ConfigureAwait(false);
        }
        catch (RpcException)
        {
            // Unreachable or too slow: cancelling the launch is the other way to make an agent kill them.
            await abandon.CancelAsync().ConfigureAwait(false);
        }
    }

    private void Progress()
    {
        var progress = new Progress { JobId = Id, Size = Size, Launched = Volatile.Read(ref _launched), Registered = Volatile.Read(ref _registered), Exited = Volatile.Read(ref _exited) };
        _events.Writer.TryWrite(new JobEvent { Progress = progress });
    }

    private async Task PumpAsync(MessageWriter<JobEvent> responses, CancellationToken cancellationToken)
    {
        try
        {
            await foreach (var item in _events.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
                await responses.WriteAsync(item, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException or IOException)
        {
            // The submitter is gone; the job is being aborted because of it.
        }
    }
}
