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

    /// <summary>
    /// Sends the first <paramref name="count"/> items of <paramref name="buf"/> to <paramref name="dest"/> and
    /// receives at most <paramref name="count"/> from <paramref name="source"/> in their place.
    /// </summary>
    public static int MPI_Sendrecv_replace<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var outgoing = Packed(buf, count, datatype, nameof(MPI_Sendrecv_replace));
        // The send may read its array until it completes, and the receive lands in the buffer: send a copy of it.
        if (ReferenceEquals(outgoing, buf)) outgoing = (T[])buf.Clone();
        var send = comm.ImmediateSend(outgoing, dest, sendtag);
        var completed = ReceiveInto(buf, count, datatype, source, recvtag, comm, nameof(MPI_Sendrecv_replace));
        send.Wait();
        Fill(status, completed, typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>Sends one value and receives one in its place; from MPI_PROC_NULL <paramref name="buf"/> stays as it was.</summary>
    public static int MPI_Sendrecv_replace<T>(ref T buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, Communicator comm, MPI_Status? status)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckOne<T>(count, datatype, nameof(MPI_Sendrecv_replace));
        var received = comm.SendReceive<T, T>(buf, dest, sendtag, source, recvtag, out var completed);
        if (source != MPI_PROC_NULL) buf = received;
        Fill(status, completed, typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>Starts a send of the first <paramref name="count"/> elements; <paramref name="buf"/> must not change until MPI_Wait.</summary>
    public static int MPI_Isend<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm, out MPI_Request request)
    {
        request = ImmediateSend(buf, count, datatype, dest, tag, comm, nameof(MPI_Isend))();
        return MPI_SUCCESS;
    }

    /// <summary>Starts a receive into the first <paramref name="count"/> elements of <paramref name="buf"/>, complete at MPI_Wait.</summary>
    public static int MPI_Irecv<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, out MPI_Request request)
    {
        request = ImmediateReceive(buf, count, datatype, source, tag, comm, nameof(MPI_Irecv))();
        return MPI_SUCCESS;
    }

    // ---- Persistent (MPI_Send_init, MPI_Recv_init): an MPI_Isend or MPI_Irecv at every MPI_Start ----

    /// <summary>
    /// A send of the first <paramref name="count"/> elements of <paramref name="buf"/> to start again and again: each
    /// MPI_Start sends them as they are then. <paramref name="dest"/> and <paramref name="tag"/> are checked at the start.
    /// </summary>
    public static int MPI_Send_init<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm, out MPI_Request request)
    {
        request = MPI_Request.Persistent(ImmediateSend(buf, count, datatype, dest, tag, comm, nameof(MPI_Send_init)), typeof(T));
        return MPI_SUCCESS;
    }

    /// <summary>A receive into the first <paramref name="count"/> elements of <paramref name="buf"/> to start again and again; each round's data is there once MPI_Wait or MPI_Test completes it.</summary>
    public static int MPI_Recv_init<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, out MPI_Request request)
    {
        request = MPI_Request.Persistent(ImmediateReceive(buf, count, datatype, source, tag, comm, nameof(MPI_Recv_init)), typeof(T));
        return MPI_SUCCESS;
    }

    // The arguments are checked once; the function returned starts the operation, packing the buffer as it is then.
    private static Func<MPI_Request> ImmediateSend<T>(T[] buf, int count, MPI_Datatype datatype, int dest, int tag, Communicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CheckPacked(buf, count, datatype, call);
        return () => new MPI_Request(comm.ImmediateSend(Packed(buf, count, datatype, call), dest, tag), typeof(T), null);
    }

    // One target serves every round: its data is delivered to the buffer when the round completes, before the next starts.
    private static Func<MPI_Request> ImmediateReceive<T>(T[] buf, int count, MPI_Datatype datatype, int source, int tag, Communicator comm, string call)
    {
        ArgumentNullException.ThrowIfNull(comm);
        var target = ReceiveTarget(buf, count, datatype, call, out var deliver);
        return () => new MPI_Request(comm.ImmediateReceive(source, tag, target), typeof(T), deliver);
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

    // ---- Status ----

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
}
