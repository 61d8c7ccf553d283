Public Class PointToPointTests

    <Fact>
    Public Sub Wildcards_StatedByTheBinding_EqualPmpiCores()
        ' Visual Basic cannot name Communicator.AnySource (MPI.NET's anySource twins it), so read Core's by reflection.
        Dim core = Function(name As String) CInt(GetType(Communicator).GetField(name).GetValue(Nothing))

        Assert.Equal(core("AnySource"), Mpi.AnySource)
        Assert.Equal(core("AnyTag"), Mpi.AnyTag)
    End Sub

    <Fact>
    Public Sub Receive_ByRefArray_InfersTypeAndFillsIt()
        Dim received = Job.RunRanks(2,
            Function(world)
                Dim values As Double() = Nothing
                If world.Rank = 0 Then
                    world.Send(New Double() {1.5, 2.5, 3.5}, 1, 7)
                Else
                    world.Receive(0, 7, values)
                End If
                Return values
            End Function)

        Assert.Equal(New Double() {1.5, 2.5, 3.5}, received(1))
    End Sub

    <Fact>
    Public Sub Receive_ByRefScalar_InfersTypeFromVariable()
        Dim received = Job.RunRanks(2,
            Function(world)
                Dim count As Integer
                If world.Rank = 1 Then world.Send(42, 0, 3) Else world.Receive(1, 3, count)
                Return count
            End Function)

        Assert.Equal(42, received(0))
    End Sub

    <Fact>
    Public Sub TryReceive_BeforeAndAfterSend_FalseThenTrueWithValue()
        Dim observed = Job.RunRanks(2,
            Function(world)
                Dim text As String = Nothing
                If world.Rank = 1 Then
                    world.Barrier()
                    world.Send("late", 0, 9)
                    Return ""
                End If
                Dim early = world.TryReceive(1, 9, text)
                world.Barrier()
                Dim status As Status = Nothing
                world.Probe(1, 9)
                Dim probed = world.TryProbe(1, 9, status)
                Dim late = world.TryReceive(1, 9, text)
                Return $"{early} {probed} {status.Tag} {late} {text}"
            End Function)

        Assert.Equal("False True 9 True late", observed(0))
    End Sub

    <Fact>
    Public Sub ReceiveAny_FromAnotherRank_ReportsSourceAndTag()
        Dim observed = Job.RunRanks(3,
            Function(world)
                If world.Rank = 2 Then world.Send(2.5, 0, 11)
                If world.Rank <> 0 Then Return ""
                Dim value As Double, source, tag As Integer
                world.ReceiveAny(value, source, tag)
                Return $"{value} from {source} tag {tag}"
            End Function)

        Assert.Equal("2.5 from 2 tag 11", observed(0))
    End Sub

End Class
