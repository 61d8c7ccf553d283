Imports Pmpi
Imports Pmpi.VisualBasic

''' <summary>bench/native/collectives.c's Allreduce (a sum of doubles) through the Visual Basic face, with ReduceOperation.Sum.</summary>
Public Module Allreduce
    ''' <summary>
    ''' Mean seconds per call on this rank of an allreduce of <paramref name="size"/> bytes, timed after a tenth as many
    ''' untimed calls: into one array of the caller's when <paramref name="into"/>, else in a new array each call.
    ''' </summary>
    Public Function SecondsPerCall(into As Boolean, world As Intracommunicator, size As Integer, iterations As Integer) As Double
        Dim values(size \ 8 - 1) As Double
        For i = 0 To values.Length - 1
            values(i) = world.Rank + i
        Next
        Dim result(values.Length - 1) As Double
        Dim warm = iterations \ 10
        Dim start = 0.0
        For i = 0 To iterations + warm - 1
            If i = warm Then
                world.Barrier()
                start = Pmpi.Environment.Time
            End If
            If into Then
                world.Allreduce(values, ReduceOperation.Sum, result)
            Else
                world.Allreduce(values, ReduceOperation.Sum)
            End If
        Next
        Return (Pmpi.Environment.Time - start) / iterations
    End Function
End Module
