''' <summary>
''' A nonblocking reduction to a root (MPI_Ireduce) that says whether this rank holds the result, as TryReduce does, so
''' a root's 0 is told from none. Test it, wait for it or put it in a RequestList through <see cref="Request"/>.
''' </summary>
Public NotInheritable Class PendingReduction(Of T)

    Private ReadOnly _holdsResult As Boolean

    Friend Sub New(request As CollectiveRequest(Of T), holdsResult As Boolean)
        Me.Request = request
        _holdsResult = holdsResult
    End Sub

    ''' <summary>Pmpi.Core's request, whose Value is the default on the ranks that hold no result.</summary>
    Public ReadOnly Property Request As CollectiveRequest(Of T)

    ''' <summary>
    ''' Waits for the reduction (MPI_Wait) and sets <paramref name="result"/> to it at the root: True there, False
    ''' elsewhere (where <paramref name="result"/> is left as it was).
    ''' </summary>
    Public Function TryGetValue(ByRef result As T) As Boolean
        Dim value = Request.Value
        If Not _holdsResult Then Return False
        result = value
        Return True
    End Function

End Class
