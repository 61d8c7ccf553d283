namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Completion ----
    //
    // MPI_REQUEST_NULL and an inactive persistent request (made by an MPI_*_init call and not started, or completed
    // since) complete at once with an empty status (MPI-4.1 §3.7.3). A completed nonblocking request becomes
    // MPI_REQUEST_NULL in an array; a persistent one stays there, inactive, for the next MPI_Start.

    /// <summary>Waits for <paramref name="request"/> to complete; MPI_REQUEST_NULL or an inactive request returns at once with an empty status.</summary>
    public static int MPI_Wait(MPI_Request? request, MPI_Status? status)
    {
        if (request is { IsActive: true }) Fill(status, request.Complete(), request.ElementType);
        else FillEmpty(status);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sets <paramref name="flag"/> when <paramref name="request"/> has completed (a receive's data is then in its
    /// buffer), as for MPI_REQUEST_NULL or an inactive request with an empty status; never blocks.
    /// </summary>
    public static int MPI_Test(MPI_Request? request, out bool flag, MPI_Status? status)
    {
        if (request is not { IsActive: true })
        {
            flag = true;
            FillEmpty(status);
            return MPI_SUCCESS;
        }
        flag = request.Test() is not null;
        if (flag) Fill(status, request.Complete(), request.ElementType);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Waits for the first <paramref name="count"/> requests to complete and sets each nonblocking one to
    /// MPI_REQUEST_NULL; a null entry of <paramref name="statuses"/> gets a new status, and MPI_REQUEST_NULL or an
    /// inactive request an empty one.
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
        for (int i = 0; i < count; i++) flag &= requests[i] is not { IsActive: true } request || request.Test() is not null;
        if (flag) MPI_Waitall(count, requests, statuses);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Waits until one of the first <paramref name="count"/> requests completes, gives its position in
    /// <paramref name="index"/> and completes it as <see cref="MPI_Waitall"/> does; MPI_UNDEFINED when none is active.
    /// </summary>
    public static int MPI_Waitany(int count, MPI_Request?[] requests, out int index, MPI_Status? status)
    {
        CheckRequests(count, requests, null, nameof(MPI_Waitany));
        index = WaitForAny(count, requests);
        if (index == MPI_UNDEFINED) FillEmpty(status);
        else Complete(requests, index, status);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sets <paramref name="flag"/> when one of the first <paramref name="count"/> requests has completed, and then
    /// completes it as <see cref="MPI_Waitany"/> does; when none is active, <paramref name="flag"/> is set and
    /// <paramref name="index"/> is MPI_UNDEFINED. Never blocks.
    /// </summary>
    public static int MPI_Testany(int count, MPI_Request?[] requests, out int index, out bool flag, MPI_Status? status)
    {
        CheckRequests(count, requests, null, nameof(MPI_Testany));
        index = Array.FindIndex(requests, 0, count, r => r is { IsActive: true } && r.Test() is not null);
        flag = index >= 0 || !HasActive(count, requests);
        if (index >= 0) Complete(requests, index, status);
        else if (flag)
        {
            index = MPI_UNDEFINED;
            FillEmpty(status);
        }
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Waits until at least one of the first <paramref name="incount"/> requests completes, then completes every one
    /// that has, as <see cref="MPI_Waitall"/> does: their positions in <paramref name="indices"/>, in order, their
    /// statuses in the same places of <paramref name="statuses"/>. <paramref name="outcount"/> is MPI_UNDEFINED when none is active.
    /// </summary>
    public static int MPI_Waitsome(int incount, MPI_Request?[] requests, out int outcount, int[] indices, MPI_Status?[]? statuses)
    {
        CheckSome(incount, requests, indices, statuses, nameof(MPI_Waitsome));
        if (WaitForAny(incount, requests) == MPI_UNDEFINED) outcount = MPI_UNDEFINED;
        else CompleteSome(incount, requests, out outcount, indices, statuses);
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Completes every one of the first <paramref name="incount"/> requests that has completed, as
    /// <see cref="MPI_Waitsome"/> does, possibly none (<paramref name="outcount"/> 0). Never blocks.
    /// </summary>
    public static int MPI_Testsome(int incount, MPI_Request?[] requests, out int outcount, int[] indices, MPI_Status?[]? statuses)
    {
        CheckSome(incount, requests, indices, statuses, nameof(MPI_Testsome));
        if (!HasActive(incount, requests)) outcount = MPI_UNDEFINED;
        else CompleteSome(incount, requests, out outcount, indices, statuses);
        return MPI_SUCCESS;
    }

    // ---- Persistent requests ----

    /// <summary>Starts a persistent request made by MPI_Send_init, MPI_Recv_init or an MPI_*_init collective; it must be inactive.</summary>
    public static int MPI_Start(MPI_Request? request)
    {
        Started(request, nameof(MPI_Start)).Start(nameof(MPI_Start));
        return MPI_SUCCESS;
    }

    /// <summary>Starts the first <paramref name="count"/> persistent requests, in order.</summary>
    public static int MPI_Startall(int count, MPI_Request?[] requests)
    {
        CheckRequests(count, requests, null, nameof(MPI_Startall));
        for (int i = 0; i < count; i++) Started(requests[i], nameof(MPI_Startall)).Start(nameof(MPI_Startall));
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Frees <paramref name="request"/> and sets it to MPI_REQUEST_NULL. An active point-to-point operation still
    /// completes, unobserved (a receive's data reaches its buffer); a collective's must be completed first.
    /// </summary>
    public static int MPI_Request_free(ref MPI_Request? request)
    {
        if (request is null) throw new MpiException(ErrorClass.InvalidRequest, "MPI_Request_free: the request is MPI_REQUEST_NULL.");
        request.Free(nameof(MPI_Request_free));
        request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }

    private static MPI_Request Started(MPI_Request? request, string call) =>
        request ?? throw new MpiException(ErrorClass.InvalidRequest, $"{call}: the request is MPI_REQUEST_NULL; MPI_Send_init, MPI_Recv_init and the MPI_*_init collectives make requests to start.");

    // ---- Helpers ----

    private static void CheckRequests(int count, MPI_Request?[] requests, MPI_Status?[]? statuses, string call)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (count < 0 || count > requests.Length)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: count {count} does not fit the {requests.Length} requests passed.");
        if (statuses is not null && statuses.Length < count)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: {statuses.Length} statuses for {count} requests.");
    }

    private static void CheckSome(int incount, MPI_Request?[] requests, int[] indices, MPI_Status?[]? statuses, string call)
    {
        CheckRequests(incount, requests, statuses, call);
        ArgumentNullException.ThrowIfNull(indices);
        if (indices.Length < incount)
            throw new MpiException(ErrorClass.InvalidCount, $"{call}: {indices.Length} indices for {incount} requests.");
    }

    // As C's MPI_Status array of values: an array of new MPI_Status[n] is filled, not skipped.
    private static MPI_Status? StatusAt(MPI_Status?[]? statuses, int i) => statuses is null ? null : statuses[i] ??= new MPI_Status();

    private static bool HasActive(int count, MPI_Request?[] requests) => Array.Exists(requests[..count], r => r is { IsActive: true });

    /// <summary>Waits until one of the active requests completes and gives its position; MPI_UNDEFINED when none is active.</summary>
    private static int WaitForAny(int count, MPI_Request?[] requests)
    {
        var pending = new RequestList();
        for (int i = 0; i < count; i++)
            if (requests[i] is { IsActive: true } request) pending.Add(request.Operation!);
        if (pending.WaitAny() is not { } done) return MPI_UNDEFINED;
        return Array.FindIndex(requests, 0, count, r => ReferenceEquals(r?.Operation, done));
    }

    private static void CompleteSome(int incount, MPI_Request?[] requests, out int outcount, int[] indices, MPI_Status?[]? statuses)
    {
        outcount = 0;
        for (int i = 0; i < incount; i++)
        {
            if (requests[i] is not { IsActive: true } request || request.Test() is null) continue;
            Complete(requests, i, StatusAt(statuses, outcount));
            indices[outcount++] = i;
        }
    }

    private static void Complete(MPI_Request?[] requests, int i, MPI_Status? status)
    {
        if (requests[i] is not { IsActive: true } request)
        {
            FillEmpty(status);
            return;
        }
        Fill(status, request.Complete(), request.ElementType);
        if (!request.IsPersistent) requests[i] = MPI_REQUEST_NULL;
    }
}
