''' <summary>Pmpi.Core's neighbourhood collectives, which Visual Basic calls as they are.</summary>
Public Class NeighborhoodTests

    ''' <summary>
    ''' On a periodic ring a rank's slots are its down then its up neighbour; on a ring of 2 one rank is both, and the
    ''' slots still pair: the down slot gets what the down neighbour sent up.
    ''' </summary>
    <Theory>
    <InlineData(2)>
    <InlineData(3)>
    Public Sub NeighborAlltoall_OnAPeriodicRing_DownSlotGetsWhatTheDownNeighbourSentUp(size As Integer)
        Dim results = Job.RunRanks(size,
            Function(world)
                Using ring As New CartesianCommunicator(world, 1, {size}, {True}, False)
                    Dim sent = {10 * ring.Rank, 10 * ring.Rank + 1} ' to the down neighbour, to the up neighbour
                    Return {ring.NeighborAlltoall(sent), ring.ImmediateNeighborAlltoall(sent).Value}
                End Using
            End Function)

        For rank = 0 To size - 1
            Dim down = (rank + size - 1) Mod size, up = (rank + 1) Mod size
            Assert.Equal({New Integer() {10 * down + 1, 10 * up}, New Integer() {10 * down + 1, 10 * up}}, results(rank))
        Next
    End Sub

    <Fact>
    Public Sub NeighborAllgather_OnAGraph_FollowsTheNeighbourList()
        Dim results = Job.RunRanks(4,
            Function(world)
                Using star As New GraphCommunicator(world, {New Integer() {1, 2, 3}, New Integer() {0}, New Integer() {0}, New Integer() {0}}, False)
                    Return (Gathered:=star.NeighborAllgather(CStr(star.Rank)), Started:=star.ImmediateNeighborAllgather(star.Rank).Value)
                End Using
            End Function)

        Assert.Equal({"1", "2", "3"}, results(0).Gathered)
        Assert.Equal({1, 2, 3}, results(0).Started)
        Assert.All(results.Skip(1), Sub(r) Assert.Equal(("0", 0), (r.Gathered.Single(), r.Started.Single())))
    End Sub

End Class
