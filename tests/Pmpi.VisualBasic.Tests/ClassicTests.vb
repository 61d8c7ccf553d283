Imports Pmpi.Classic
Imports Pmpi.Classic.MPI

''' <summary>Fortran MPI code ported to Visual Basic line by line through Pmpi.Classic.</summary>
Public Class ClassicTests

    <Fact>
    Public Sub MPI_Send_FortranStyleArrayAndReduce_RootGetsTotal()
        Dim totals(2) As Double
        Dim echoed(2)() As Integer
        Mpi.Run(3, Job.Timeout,
            Sub(world)
                Dim rank, size, ierr As Integer
                Dim buffer(3) As Integer
                Dim status As New MPI_Status()
                Dim local, total As Double
                Dim args = Array.Empty(Of String)()
                ierr = MPI_Init(args)
                ierr = MPI_Comm_rank(MPI_COMM_WORLD, rank)
                ierr = MPI_Comm_size(MPI_COMM_WORLD, size)
                If rank = 0 Then
                    For dest = 1 To size - 1
                        buffer = {dest, dest * 2, dest * 3, dest * 4}
                        ierr = MPI_Send(buffer, 4, MPI_INTEGER, dest, 99, MPI_COMM_WORLD)
                    Next
                Else
                    ierr = MPI_Recv(buffer, 4, MPI_INTEGER, 0, 99, MPI_COMM_WORLD, status)
                End If
                echoed(rank) = buffer
                local = buffer.Sum()
                ierr = MPI_Reduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
                totals(rank) = total
                ierr = MPI_Finalize()
            End Sub)

        Assert.Equal(New Integer() {2, 4, 6, 8}, echoed(2))
        Assert.Equal(New Double() {20 + 10 + 20, 0, 0}, totals) ' the root still holds the last buffer it sent
    End Sub

End Class
