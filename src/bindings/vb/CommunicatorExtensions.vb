Imports System.Runtime.CompilerServices

''' <summary>
''' Visual Basic forms of the communicator operations: reductions, blocking, nonblocking and persistent, named by
''' <see cref="ReduceOperation"/> or given as a lambda, and Try forms that return whether something arrived with the
''' value ByRef. Receives that name their type through a ByRef argument (<c>world.Receive(0, 7, values)</c>) come with
''' Pmpi.Core itself.
''' </summary>
Public Module CommunicatorExtensions

    ''' <summary>Every rank's value combined by <paramref name="op"/>, at <paramref name="root"/>; Nothing elsewhere (MPI_Reduce).</summary>
    <Extension>
    Public Function Reduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation, root As Integer) As T
        Return comm.Reduce(value, OperationOf(Of T)(op), root)
    End Function

    ''' <summary>Every rank's value combined by <paramref name="op"/>, on every rank (MPI_Allreduce).</summary>
    <Extension>
    Public Function Allreduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation) As T
        Return comm.Allreduce(value, OperationOf(Of T)(op))
    End Function

    ''' <summary>Every rank's value combined by <paramref name="combine"/> (e.g. <c>Function(a, b) a + b</c>), on every rank.</summary>
    <Extension>
    Public Function Allreduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T)) As T
        Return comm.Allreduce(value, OperationOf(combine))
    End Function

    ''' <summary>Every rank's value combined by <paramref name="combine"/>, at <paramref name="root"/>; Nothing elsewhere.</summary>
    <Extension>
    Public Function Reduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T), root As Integer) As T
        Return comm.Reduce(value, OperationOf(combine), root)
    End Function

    ''' <summary>Arrays combined element by element at <paramref name="root"/>; Nothing elsewhere (MPI_Reduce on a buffer).</summary>
    <Extension>
    Public Function Reduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation, root As Integer) As T()
        Return comm.Reduce(values, OperationOf(Of T)(op), root)
    End Function

    ''' <summary>Arrays combined element by element, on every rank (MPI_Allreduce on a buffer).</summary>
    <Extension>
    Public Function Allreduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation) As T()
        Return comm.Allreduce(values, OperationOf(Of T)(op))
    End Function

    ''' <summary>Arrays combined element by element by <paramref name="combine"/> (e.g. <c>Function(a, b) a + b</c>), on every rank.</summary>
    <Extension>
    Public Function Allreduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T)) As T()
        Return comm.Allreduce(values, OperationOf(combine))
    End Function

    ''' <summary>
    ''' Arrays combined element by element into <paramref name="result"/>, on every rank (MPI_Allreduce into a buffer):
    ''' nothing is allocated. A new array of 100 KB or more each call costs a loop more than the reduction itself: .NET
    ''' collects such arrays in full collections and gives their memory back, so every call's array is paged in afresh.
    ''' <paramref name="result"/> has <paramref name="values"/>' length, or is <paramref name="values"/> itself (in place).
    ''' </summary>
    <Extension>
    Public Sub Allreduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation, result As T())
        AllreduceInto(comm, values, OperationOf(Of T)(op), result)
    End Sub

    ''' <summary>The same with an operation of the caller's (e.g. <c>Function(a, b) a + b</c>).</summary>
    <Extension>
    Public Sub Allreduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T), result As T())
        AllreduceInto(comm, values, OperationOf(combine), result)
    End Sub

    ''' <summary>The combination of the values of ranks 0 to this one (MPI_Scan).</summary>
    <Extension>
    Public Function Scan(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation) As T
        Return comm.Scan(value, OperationOf(Of T)(op))
    End Function

    ''' <summary>
    ''' Every rank's value combined by <paramref name="op"/>, into <paramref name="result"/> at <paramref name="root"/>:
    ''' True there, False elsewhere (where <paramref name="result"/> is left as it was), so a root's 0 is told from
    ''' no result (MPI_Reduce).
    ''' </summary>
    <Extension>
    Public Function TryReduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation, root As Integer, ByRef result As T) As Boolean
        Return AtRoot(comm, comm.Reduce(value, OperationOf(Of T)(op), root), root, result)
    End Function

    ''' <summary>The same with an operation of the caller's (e.g. <c>Function(a, b) a * b</c>).</summary>
    <Extension>
    Public Function TryReduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T), root As Integer, ByRef result As T) As Boolean
        Return AtRoot(comm, comm.Reduce(value, OperationOf(combine), root), root, result)
    End Function

    ''' <summary>Arrays combined element by element by <paramref name="combine"/> at <paramref name="root"/>; Nothing elsewhere.</summary>
    <Extension>
    Public Function Reduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T), root As Integer) As T()
        Return comm.Reduce(values, OperationOf(combine), root)
    End Function

    ''' <summary>The combination by <paramref name="combine"/> of the values of ranks 0 to this one (MPI_Scan).</summary>
    <Extension>
    Public Function Scan(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T)) As T
        Return comm.Scan(value, OperationOf(combine))
    End Function

    ''' <summary>
    ''' The combination of the values of ranks 0 to this one's predecessor into <paramref name="result"/>: True, or
    ''' False on rank 0, which has no predecessor (MPI_Exscan).
    ''' </summary>
    <Extension>
    Public Function TryExclusiveScan(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation, ByRef result As T) As Boolean
        Return AtRoot(comm, comm.ExclusiveScan(value, OperationOf(Of T)(op)), If(comm.Rank = 0, -1, comm.Rank), result)
    End Function

    ' ---- Nonblocking (MPI_I*) and persistent (MPI_*_init) reductions, by name or by lambda as the blocking ones ----

    ''' <summary>Starts a reduction of every rank's value to <paramref name="root"/> (MPI_Ireduce); the request's value is the default elsewhere (<c>ImmediateTryReduce</c> tells the two apart).</summary>
    <Extension>
    Public Function ImmediateReduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation, root As Integer) As CollectiveRequest(Of T)
        Return comm.ImmediateReduce(value, OperationOf(Of T)(op), root)
    End Function

    ''' <summary>The same with an operation of the caller's (e.g. <c>Function(a, b) a * b</c>).</summary>
    <Extension>
    Public Function ImmediateReduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T), root As Integer) As CollectiveRequest(Of T)
        Return comm.ImmediateReduce(value, OperationOf(combine), root)
    End Function

    ''' <summary>Starts combining arrays element by element at <paramref name="root"/> (MPI_Ireduce on a buffer); the request's value is Nothing elsewhere.</summary>
    <Extension>
    Public Function ImmediateReduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation, root As Integer) As CollectiveRequest(Of T())
        Return comm.ImmediateReduce(values, OperationOf(Of T)(op), root)
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function ImmediateReduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T), root As Integer) As CollectiveRequest(Of T())
        Return comm.ImmediateReduce(values, OperationOf(combine), root)
    End Function

    ''' <summary>
    ''' Starts a reduction to <paramref name="root"/> (MPI_Ireduce) whose <see cref="PendingReduction(Of T).TryGetValue"/>
    ''' is True at the root only, so a root's 0 is told from none, as with <c>TryReduce</c>.
    ''' </summary>
    <Extension>
    Public Function ImmediateTryReduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation, root As Integer) As PendingReduction(Of T)
        Return New PendingReduction(Of T)(comm.ImmediateReduce(value, OperationOf(Of T)(op), root), comm.Rank = root)
    End Function

    ''' <summary>The same with an operation of the caller's (e.g. <c>Function(a, b) a * b</c>).</summary>
    <Extension>
    Public Function ImmediateTryReduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T), root As Integer) As PendingReduction(Of T)
        Return New PendingReduction(Of T)(comm.ImmediateReduce(value, OperationOf(combine), root), comm.Rank = root)
    End Function

    ''' <summary>Starts a reduction of every rank's value, on every rank (MPI_Iallreduce).</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation) As CollectiveRequest(Of T)
        Return comm.ImmediateAllreduce(value, OperationOf(Of T)(op))
    End Function

    ''' <summary>The same with an operation of the caller's (e.g. <c>Function(a, b) a + b</c>).</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T)) As CollectiveRequest(Of T)
        Return comm.ImmediateAllreduce(value, OperationOf(combine))
    End Function

    ''' <summary>Starts combining arrays element by element, on every rank, by blocks when long (MPI_Iallreduce on a buffer).</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation) As CollectiveRequest(Of T())
        Return comm.ImmediateAllreduce(values, OperationOf(Of T)(op))
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T)) As CollectiveRequest(Of T())
        Return comm.ImmediateAllreduce(values, OperationOf(combine))
    End Function

    ''' <summary>Starts combining arrays element by element into <paramref name="result"/>, of <paramref name="values"/>' length (MPI_Iallreduce with a receive buffer); the request's value is <paramref name="result"/>.</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation, result As T()) As CollectiveRequest(Of T())
        Return comm.ImmediateAllreduce(values, OperationOf(Of T)(op), result)
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function ImmediateAllreduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T), result As T()) As CollectiveRequest(Of T())
        Return comm.ImmediateAllreduce(values, OperationOf(combine), result)
    End Function

    ''' <summary>Starts an inclusive scan (MPI_Iscan).</summary>
    <Extension>
    Public Function ImmediateScan(Of T)(comm As Intracommunicator, value As T, op As ReduceOperation) As CollectiveRequest(Of T)
        Return comm.ImmediateScan(value, OperationOf(Of T)(op))
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function ImmediateScan(Of T)(comm As Intracommunicator, value As T, combine As Func(Of T, T, T)) As CollectiveRequest(Of T)
        Return comm.ImmediateScan(value, OperationOf(combine))
    End Function

    ''' <summary>
    ''' Combines arrays element by element at <paramref name="root"/> at each start, reading <paramref name="values"/> as
    ''' they are then (MPI_Reduce_init); the request's value is the root's result, which each round fills again, and
    ''' Nothing elsewhere.
    ''' </summary>
    <Extension>
    Public Function PersistentReduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation, root As Integer) As PersistentRequest(Of T())
        Return comm.PersistentReduce(values, OperationOf(Of T)(op), root)
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function PersistentReduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T), root As Integer) As PersistentRequest(Of T())
        Return comm.PersistentReduce(values, OperationOf(combine), root)
    End Function

    ''' <summary>
    ''' Combines arrays element by element, on every rank, at each start, reading <paramref name="values"/> as they are
    ''' then (MPI_Allreduce_init); each round fills the same result array.
    ''' </summary>
    <Extension>
    Public Function PersistentAllreduce(Of T)(comm As Intracommunicator, values As T(), op As ReduceOperation) As PersistentRequest(Of T())
        Return comm.PersistentAllreduce(values, OperationOf(Of T)(op))
    End Function

    ''' <summary>The same with an operation of the caller's.</summary>
    <Extension>
    Public Function PersistentAllreduce(Of T)(comm As Intracommunicator, values As T(), combine As Func(Of T, T, T)) As PersistentRequest(Of T())
        Return comm.PersistentAllreduce(values, OperationOf(combine))
    End Function

    ''' <summary>
    ''' Receives a matching message into <paramref name="value"/> if one has arrived and returns True; returns False at
    ''' once otherwise (MPI_Iprobe then MPI_Recv).
    ''' </summary>
    <Extension>
    Public Function TryReceive(Of T)(comm As Communicator, source As Integer, tag As Integer, ByRef value As T) As Boolean
        Dim status = comm.ImmediateProbe(source, tag)
        If status Is Nothing Then Return False
        comm.Receive(status.Source, status.Tag, value)
        Return True
    End Function

    ''' <summary>Whether a matching message has arrived, its status in <paramref name="status"/> (MPI_Iprobe).</summary>
    <Extension>
    Public Function TryProbe(comm As Communicator, source As Integer, tag As Integer, ByRef status As Status) As Boolean
        status = comm.ImmediateProbe(source, tag)
        Return status IsNot Nothing
    End Function

    ''' <summary>Receives a value from any source with any tag, reporting where it came from ByRef.</summary>
    <Extension>
    Public Sub ReceiveAny(Of T)(comm As Communicator, ByRef value As T, ByRef source As Integer, ByRef tag As Integer)
        Dim status As CompletedStatus = Nothing
        comm.Receive(AnySource, AnyTag, value, status)
        source = status.Source
        tag = status.Tag
    End Sub

    ''' <summary>Core's allreduce into a caller's array, which must be <paramref name="values"/>' length: Core would give the ByRef another.</summary>
    Private Sub AllreduceInto(Of T)(comm As Intracommunicator, values As T(), op As ReductionOperation(Of T), result As T())
        ArgumentNullException.ThrowIfNull(values)
        ArgumentNullException.ThrowIfNull(result)
        If result.Length <> values.Length Then
            Throw New MpiException(ErrorClass.InvalidCount, $"Allreduce: rank {comm.Rank}'s result array holds {result.Length} elements; its values, {values.Length}.")
        End If
        Dim target = result
        comm.Allreduce(values, op, target)
    End Sub

    ''' <summary>Sets <paramref name="result"/> to <paramref name="value"/> on rank <paramref name="holder"/> alone, and says whether it did.</summary>
    Private Function AtRoot(Of T)(comm As Intracommunicator, value As T, holder As Integer, ByRef result As T) As Boolean
        If comm.Rank <> holder Then Return False
        result = value
        Return True
    End Function

    ''' <summary>
    ''' A delegate of the lambda's own method, not of Func.Invoke: Pmpi.Core reads that method to know
    ''' <c>Function(a, b) a + b</c> for MPI_SUM, as another rank's <c>ReduceOperation.Sum</c>, so both take one algorithm.
    ''' </summary>
    Private Function OperationOf(Of T)(combine As Func(Of T, T, T)) As ReductionOperation(Of T)
        ArgumentNullException.ThrowIfNull(combine)
        Return CType([Delegate].CreateDelegate(GetType(ReductionOperation(Of T)), combine.Target, combine.Method), ReductionOperation(Of T))
    End Function

    Private Function OperationOf(Of T)(op As ReduceOperation) As ReductionOperation(Of T)
        Select Case op
            Case ReduceOperation.Sum : Return Operation(Of T).Add
            Case ReduceOperation.Product : Return Operation(Of T).Multiply
            Case ReduceOperation.Min : Return Operation(Of T).Min
            Case ReduceOperation.Max : Return Operation(Of T).Max
            Case ReduceOperation.LogicalAnd : Return Operation(Of T).LogicalAnd
            Case ReduceOperation.LogicalOr : Return Operation(Of T).LogicalOr
            Case ReduceOperation.LogicalXor : Return Operation(Of T).LogicalXor
            Case ReduceOperation.BitwiseAnd : Return Operation(Of T).BitwiseAnd
            Case ReduceOperation.BitwiseOr : Return Operation(Of T).BitwiseOr
            Case ReduceOperation.BitwiseXor : Return Operation(Of T).ExclusiveOr
            Case Else : Throw New MpiException(ErrorClass.InvalidArgument, $"{CInt(op)} is not a ReduceOperation.")
        End Select
    End Function

End Module
