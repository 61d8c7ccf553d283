namespace Pmpi;

/// <summary>A set of outstanding requests to complete together (MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test*).</summary>
public sealed class RequestList
{
    private readonly List<Request> _requests = [];

    /// <summary>The requests not yet removed by <see cref="WaitAny"/>, <see cref="WaitSome"/>, <see cref="TestAny"/> or <see cref="TestSome"/>.</summary>
    public int Count => _requests.Count;

    /// <summary>Adds a request.</summary>
    public void Add(Request request)
    {
        ArgumentNullException.ThrowIfNull(request);
        _requests.Add(request);
    }

    /// <summary>Removes a request without completing it.</summary>
    public bool Remove(Request request) => _requests.Remove(request);

    /// <summary>Waits for every request and returns their statuses in order; the list is emptied.</summary>
    public List<CompletedStatus> WaitAll()
    {
        var statuses = _requests.Select(r => r.Wait()).ToList();
        _requests.Clear();
        return statuses;
    }

    /// <summary>Completes every request if all have completed, returning their statuses; otherwise null and nothing changes.</summary>
    public List<CompletedStatus>? TestAll()
    {
        if (_requests.Any(r => !r.Completion.IsCompleted))
        {
            ExpeditePending();
            return null;
        }
        return WaitAll();
    }

    /// <summary>Waits until one request completes, removes it and returns it; null if the list is empty.</summary>
    public Request? WaitAny()
    {
        if (_requests.Count == 0) return null;
        if (TestAny() is { } done) return done;
        using var signal = new ManualResetEventSlim();
        // On every request: one that completed since the test above signals at once.
        foreach (var request in _requests) request.Completion.OnCompleted(signal.Set);
        signal.Wait();
        return TestAny();
    }

    /// <summary>Removes and returns a completed request if there is one, otherwise null (MPI_Testany).</summary>
    public Request? TestAny()
    {
        int index = _requests.FindIndex(r => r.Completion.IsCompleted);
        if (index < 0)
        {
            ExpeditePending();
            return null;
        }
        var request = _requests[index];
        _requests.RemoveAt(index);
        request.Wait();
        return request;
    }

    /// <summary>Waits until at least one request completes, then removes and returns all completed ones.</summary>
    public List<Request> WaitSome()
    {
        var first = WaitAny();
        if (first is null) return [];
        return [first, .. TestSome()];
    }

    /// <summary>Removes and returns every completed request (possibly none).</summary>
    public List<Request> TestSome()
    {
        var done = _requests.Where(r => r.Completion.IsCompleted).ToList();
        foreach (var request in done)
        {
            _requests.Remove(request);
            request.Wait();
        }
        ExpeditePending();
        return done;
    }

    /// <summary>Tells each request not completed yet that the program waits for it without running it (<see cref="Request.Expedite"/>).</summary>
    private void ExpeditePending()
    {
        foreach (var request in _requests.Where(r => !r.Completion.IsCompleted).ToList()) request.Expedite();
    }
}
