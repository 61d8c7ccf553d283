using System.Collections.Concurrent;

namespace Pmpi.Agent.Master;

/// <summary>The jobs this master runs, by id: added when a submission starts them, found by their ranks' calls.</summary>
internal sealed class RunningJobs
{
    private readonly ConcurrentDictionary<string, JobRun> _jobs = new(StringComparer.Ordinal);

    /// <summary>Adds <paramref name="job"/> until the returned handle is disposed (the job ended).</summary>
    public IDisposable Add(JobRun job)
    {
        _jobs[job.Id] = job;
        return new Removal(this, job.Id);
    }

    /// <summary>The running job <paramref name="jobId"/>, if any.</summary>
    public bool TryGet(string jobId, [System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out JobRun job) => _jobs.TryGetValue(jobId, out job);

    private sealed class Removal(RunningJobs jobs, string jobId) : IDisposable
    {
        public void Dispose() => jobs._jobs.TryRemove(jobId, out _);
    }
}
