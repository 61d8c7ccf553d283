Imports Pmpi.Payloads

''' <summary>
''' Starts PMPI from Visual Basic without the name clash of Pmpi.Environment and System.Environment:
''' <c>Mpi.Run(args, Sub(world) ... End Sub)</c>.
''' </summary>
Public Module Mpi

    ' Communicator.AnySource and .AnyTag have MPI.NET's lowercase twins (anySource, anyTag), which Visual Basic, being
    ' case-insensitive, cannot tell apart: the binding states the values, and a test checks them against Pmpi.Core's.

    ''' <summary>Matches a message from any source (MPI_ANY_SOURCE).</summary>
    Public Const AnySource As Integer = -1

    ''' <summary>Matches a message with any tag (MPI_ANY_TAG).</summary>
    Public Const AnyTag As Integer = -1

    ''' <summary>
    ''' Runs <paramref name="body"/> on every rank: one rank when launched by <c>pmpi run</c>, else <c>--pmpi-ranks N</c>
    ''' (or PMPI_RANKS) threads of this process. PMPI's own arguments are removed from <paramref name="args"/> first.
    ''' </summary>
    ''' <exception cref="MpiException">A rank failed or aborted; the message names it.</exception>
    Public Sub Run(ByRef args As String(), body As Action(Of Intracommunicator))
        Environment.Run(args, body)
    End Sub

    ''' <summary>
    ''' Runs <paramref name="body"/> as <see cref="Run(ByRef String(), Action(Of Intracommunicator))"/> does and returns
    ''' what it returned on this process's rank (the lowest one's, when the ranks are threads here), so a
    ''' <c>Function Main(args As String()) As Integer</c> can return it as the exit code.
    ''' </summary>
    ''' <exception cref="MpiException">A rank failed or aborted; the message names it.</exception>
    Public Function Run(ByRef args As String(), body As Func(Of Intracommunicator, Integer)) As Integer
        ArgumentNullException.ThrowIfNull(body)
        Dim results As New System.Collections.Concurrent.ConcurrentDictionary(Of Integer, Integer)()
        Environment.Run(args, Sub(world) results(world.Rank) = body(world))
        Return results.OrderBy(Function(result) result.Key).First().Value
    End Function

    ''' <summary>The same with a serializer of the caller's choosing (every rank of a job must use the same one).</summary>
    Public Sub Run(ByRef args As String(), body As Action(Of Intracommunicator), serializer As IPayloadSerializer)
        Environment.Run(args, body, New EnvironmentOptions With {.Serializer = serializer})
    End Sub

    ''' <summary>Runs <paramref name="body"/> on <paramref name="ranks"/> in-process ranks, aborting them after <paramref name="timeout"/>.</summary>
    ''' <exception cref="TimeoutException">The job ran past <paramref name="timeout"/>.</exception>
    Public Sub Run(ranks As Integer, timeout As TimeSpan, body As Action(Of Intracommunicator))
        Environment.Run(ranks, body, New EnvironmentOptions With {.Timeout = timeout})
    End Sub

    ''' <summary>Wall-clock seconds since an arbitrary origin, for timing (MPI_Wtime).</summary>
    Public ReadOnly Property Time As Double
        Get
            Return Environment.Time
        End Get
    End Property

    ''' <summary>The name of the node this rank runs on (MPI_Get_processor_name).</summary>
    Public ReadOnly Property ProcessorName As String
        Get
            Return Environment.ProcessorName
        End Get
    End Property

End Module
