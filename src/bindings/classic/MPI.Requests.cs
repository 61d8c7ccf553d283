namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Completion ----

    /// <summary>Waits for <paramref name="request"/> to complete; MPI_REQUEST_NULL returns at once with an empty status.</summary>
    public static int MPI_Wait(MPI_Request? request, MPI_Status? status)
    {
        if (request is null) FillEmpty(status);
        else Fill(status, request.Wait(), request.ElementType);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sets <paramref name="flag"/> when <paramref name="request"/> has completed (a receive's data is then in its
    /// buffer), as for MPI_REQUEST_NULL with an empty status; never blocks.
    /// </summary>
    public static int MPI_Test(MPI_Request? request, out bool flag, MPI_Status? status)
    {
        if (request is null)
        {
            flag = true;
            FillEmpty(status);
            return MPI_SUCCESS;
        }
        var completed = request.Test();
        flag = completed is not null;
        if (completed is not null) Fill(status, completed, request.ElementType);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Waits for the first <paramref name="count"/> requests to complete and sets each to MPI_REQUEST_NULL; a null
    /// entry of <paramref name="statuses"/> gets a new status, and a request already MPI_REQUEST_NULL an empty one.
    /// </summary>
    public static int MPI_Waitall(int count, MPI_Request?[] requests, MPI_Status?[]? statuses)
    {
        CheckRequests(count, requests, statuses, nameof(MPI_Waitall));
        for (int i = 0; i < count; i++) Complete(requests, i, StatusAt(statuses, i));
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sets <paramref name="flag"/> when all of the first <paramref name="count"/> requests have completed, and then
    /// completes them as <see cref="MPI_Waitall"/> does; otherwise changes nothing. Never blocks.
    /// </summary>
    public static int MPI_Testall(int count, MPI_Request?[] requests, out bool flag, MPI_Status?[]? statuses)
    {
        CheckRequests(count, requests, statuses, nameof(MPI_Testall));
        flag = true;
        for (int i = 0; i < count; i++) flag &= requests[i]?.Test() is not null;
        if (flag) MPI_Waitall(count, requests, statuses);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Waits until one of the first <paramref name="count"/> requests completes, gives its position in
    /// <paramref name="index"/> and sets it to MPI_REQUEST_NULL; MPI_UNDEFINED when every request is MPI_REQUEST_NULL.
    /// </summary>
    public static int MPI_Waitany(int count, MPI_Request?[] requests, out int index, MPI_Status? status)
    {
        CheckRequests(count, requests, null, nameof(MPI_Waitany));
        var pending = new RequestList();
        for (int i = 0; i < count; i++)
            if (requests[i] is { } request) pending.Add(request.Operation);
        if (pending.WaitAny() is not { } done)
        {
            index = MPI_UNDEFINED;
            FillEmpty(status);
            return MPI_SUCCESS;
        }
        index = Array.FindIndex(requests, 0, count, r => ReferenceEquals(r?.Operation, done));
        Complete(requests, index, status);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sets <paramref name="flag"/> when one of the first <paramref name="count"/> requests has completed, and then
    /// completes it as <see cref="MPI_Waitany"/> does; when every request is MPI_REQUEST_NULL, <paramref name="flag"/>
    /// is set and <paramref name="index"/> is MPI_UNDEFINED. Never blocks.
    /// </summary>
    public static int MPI_Testany(int count, MPI_Request?[] requests, out int index, out bool flag, MPI_Status? status)
    {
        CheckRequests(count, requests, null, nameof(MPI_Testany));
        index = Array.FindIndex(requests, 0, count, r => r?.Test() is not null);
        flag = index >= 0 || Array.TrueForAll(requests[..count], r => r is null);
        if (index >= 0) Complete(requests, index, status);
        else if (flag)
        {
            index = MPI_UNDEFINED;
            FillEmpty(status);
        }
        return MPI_SUCCESS;
    }

    private static void CheckRequests(int count, MPI_Request?[] requests, MPI_Status?[]? statuses, string call)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (count < 0 || count > requests.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} does not fit the {requests.Length} requests passed.");
        if (statuses is not null && statuses.Length < count)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: {statuses.Length} statuses for {count} requests.");
    }

    // As C's MPI_Status array of values: an array of new MPI_Status[n] is filled, not skipped.
    private static MPI_Status? StatusAt(MPI_Status?[]? statuses, int i) => statuses is null ? null : statuses[i] ??= new MPI_Status();

    private static void Complete(MPI_Request?[] requests, int i, MPI_Status? status)
    {
        if (requests[i] is not { } request)
        {
            FillEmpty(status);
            return;
        }
        Fill(status, request.Wait(), request.ElementType);
        requests[i] = MPI_REQUEST_NULL;
    }
}
