namespace Pmpi.Classic;

public static partial class MPI
{
    // ---- Point-to-point ----

    /// <summary>Sends the first <paramref name="count"/> elements of <paramref name="buf"/>.</summary>
    public static int MPI_Send<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Send(Packed(buf, count, datatype, nameof(MPI_Send)), dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Sends one value (C's <c>MPI_Send(&amp;x, 1, ...)</c>).</summary>
    public static int MPI_Send<T>(ref T buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Send));
        comm.Send(buf, dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Sends the first <paramref name="count"/> elements and returns once the receiver has matched them (synchronous mode).</summary>
    public static int MPI_Ssend<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        comm.Ssend(Packed(buf, count, datatype, nameof(MPI_Ssend)), dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Sends one value and returns once the receiver has matched it.</summary>
    public static int MPI_Ssend<T>(ref T buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Ssend));
        comm.Ssend(buf, dest, tag);
        return MPI_SUCCESS;
    }

    /// <summary>Receives at most <paramref name="count"/> elements into the front of <paramref name="buf"/>; a longer message is a Truncate error.</summary>
    public static int MPI_Recv<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        Fill(status, ReceiveInto(buf, count, datatype, source, tag, comm, nameof(MPI_Recv)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>Receives one value (C's <c>MPI_Recv(&amp;x, 1, ...)</c>).</summary>
    public static int MPI_Recv<T>(ref T buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Recv));
        comm.Receive(source, tag, out buf, out CompletedStatus completed);
        Fill(status, completed, typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>
    /// Sends the first <paramref name="sendcount"/> elements of <paramref name="sendbuf"/> to <paramref name="dest"/>
    /// while receiving at most <paramref name="recvcount"/> into <paramref name="recvbuf"/> from <paramref name="source"/>,
    /// so that a ring or shift of exchanges cannot deadlock.
    /// </summary>
    public static int MPI_Sendrecv<TSend, TRecv>(TSend[] sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
        TRecv[] recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var send = comm.ImmediateSend(Packed(sendbuf, sendcount, sendtype, nameof(MPI_Sendrecv)), dest, sendtag);
        var completed = ReceiveInto(recvbuf, recvcount, recvtype, source, recvtag, comm, nameof(MPI_Sendrecv));
        send.Wait();
        Fill(status, completed, typeof(TRecv));
        return MPI_SUCCESS;
    }

    /// <summary>Sends one value and receives one (C's <c>MPI_Sendrecv(&amp;x, 1, ..., &amp;y, 1, ...)</c>); from MPI_PROC_NULL <paramref name="recvbuf"/> stays as it was.</summary>
    public static int MPI_Sendrecv<TSend, TRecv>(ref TSend sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
        ref TRecv recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<TSend>(sendcount, sendtype, nameof(MPI_Sendrecv));
        CheckOne<TRecv>(recvcount, recvtype, nameof(MPI_Sendrecv));
        var received = comm.SendReceive<TSend, TRecv>(sendbuf, dest, sendtag, source, recvtag, out var completed);
        if (source != MPI_PROC_NULL) recvbuf = received;
        Fill(status, completed, typeof(TRecv));
        return MPI_SUCCESS;
    }

    /// <summary>Starts a send of the first <paramref name="count"/> elements; <paramref name="buf"/> must not change until MPI_Wait.</summary>
    public static int MPI_Isend<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(comm);
        request = new MPI_Request(comm.ImmediateSend(Packed(buf, count, datatype, nameof(MPI_Isend)), dest, tag), typeof(T), null);
        return MPI_SUCCESS;
    }

    /// <summary>Starts a receive into the first <paramref name="count"/> elements of <paramref name="buf"/>, complete at MPI_Wait.</summary>
    public static int MPI_Irecv<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, out MPI_Request request)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var target = ReceiveTarget(buf, count, datatype, nameof(MPI_Irecv), out var deliver);
        request = new MPI_Request(comm.ImmediateReceive(source, tag, target), typeof(T), deliver);
        return MPI_SUCCESS;
    }

    // ---- Probes ----

    /// <summary>Waits until a message from <paramref name="source"/> with <paramref name="tag"/> can be received, and describes it without receiving it.</summary>
    public static int MPI_Probe(int source, int tag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        FillProbed(status, source == MPI_PROC_NULL ? null : comm.Probe(source, tag));
        return MPI_SUCCESS;
    }

    /// <summary>Sets <paramref name="flag"/> when a matching message can be received now, and then describes it in <paramref name="status"/>.</summary>
    public static int MPI_Iprobe(int source, int tag, Communicator comm, out bool flag, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        if (source == MPI_PROC_NULL)
        {
            flag = true;
            FillProbed(status, null);
            return MPI_SUCCESS;
        }
        var probed = comm.ImmediateProbe(source, tag);
        flag = probed is not null;
        if (flag) FillProbed(status, probed);
        return MPI_SUCCESS;
    }

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

    /// <summary>
    /// The number of <paramref name="datatype"/> items a receive delivered, or a probed message holds; MPI_UNDEFINED
    /// when the elements do not make whole items of a derived datatype.
    /// </summary>
    public static int MPI_Get_count(MPI_Status status, MPI_Datatype datatype, out int count)
    {
        ArgumentNullException.ThrowIfNull(status);
        ArgumentNullException.ThrowIfNull(datatype);
        int elements;
        if (status.Probed is { } probed)
        {
            elements = probed.Count(datatype.ElementType)
                ?? throw new MpiException(ErrorClass.TypeMismatch, $"MPI_Get_count: the probed message does not hold {datatype} elements.");
        }
        else
        {
            if (status.ElementType is { } type && type != datatype.ElementType)
                throw new MpiException(ErrorClass.TypeMismatch, $"MPI_Get_count: the receive delivered {type.Name} elements, not {datatype}.");
            elements = status.Count;
        }
        count = datatype.Size == 0 ? (elements == 0 ? 0 : MPI_UNDEFINED) : elements % datatype.Size == 0 ? elements / datatype.Size : MPI_UNDEFINED;
        return MPI_SUCCESS;
    }

    private static CompletedStatus ReceiveInto<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, string call)
    {
        var target = ReceiveTarget(buf, count, datatype, call, out var deliver);
        comm.Receive(source, tag, ref target, out CompletedStatus completed);
        deliver?.Invoke(completed.Count());
        return completed;
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
