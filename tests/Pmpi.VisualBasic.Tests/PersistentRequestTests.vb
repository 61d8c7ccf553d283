Public Class PersistentRequestTests

    ''' <summary>Each start reads the array as it is then: three rounds with the array changed between them give each round's sum.</summary>
    <Fact>
    Public Sub PersistentAllreduce_ThreeRoundsArrayChangedBetween_EachRoundsSum()
        Dim rounds = Job.RunRanks(4,
            Function(world)
                Dim values(999) As Double
                Dim sum = world.PersistentAllreduce(values, ReduceOperation.Sum)
                Dim results As New List(Of Double())
                For round = 1 To 3
                    Array.Fill(values, CDbl(round * (world.Rank + 1)))
                    sum.Start()
                    results.Add(CType(sum.Value.Clone(), Double()))
                Next
                Return results
            End Function)

        For Each ofRank In rounds
            Assert.Equal(Enumerable.Range(1, 3).Select(Function(round) Enumerable.Repeat(round * 10.0, 1000).ToArray()), ofRank)
        Next
    End Sub

    <Fact>
    Public Sub PersistentReduce_ByNameAndByLambda_RootsResultEachRoundNothingElsewhere()
        Dim results = Job.RunRanks(3,
            Function(world)
                Dim values = {0, 0}
                Dim multiply As Func(Of Integer, Integer, Integer) = Function(a, b) a * b
                Dim sum = world.PersistentReduce(values, ReduceOperation.Sum, 1)
                Dim product = world.PersistentReduce(values, multiply, 1)
                Dim rounds As New List(Of (Integer(), Integer()))
                For round = 1 To 2
                    values(0) = round
                    values(1) = world.Rank + 1
                    PersistentRequest.StartAll(sum, product)
                    rounds.Add((sum.Value?.ToArray(), product.Value?.ToArray()))
                Next
                Return rounds
            End Function)

        Assert.Equal({New Integer() {3, 6}, New Integer() {6, 6}}, results(1).Select(Function(round) round.Item1))
        Assert.Equal({New Integer() {1, 6}, New Integer() {8, 6}}, results(1).Select(Function(round) round.Item2))
        Assert.All({results(0), results(2)}, Sub(r) Assert.All(r, Sub(round) Assert.True(round.Item1 Is Nothing AndAlso round.Item2 Is Nothing)))
    End Sub

    ''' <summary>Pmpi.Core's persistent sends and receives, as Visual Basic calls them: a ring bound once, run three rounds.</summary>
    <Fact>
    Public Sub PersistentSendAndReceive_RingOverRounds_EachRoundFromTheLeft()
        Dim received = Job.RunRanks(3,
            Function(world)
                Dim outgoing = {0}
                Dim send = world.PersistentSend(outgoing, (world.Rank + 1) Mod 3, 4)
                Dim receive = world.PersistentReceive(Of Integer())((world.Rank + 2) Mod 3, 4)
                Dim rounds As New List(Of Integer)
                For round = 1 To 3
                    outgoing(0) = 100 * round + world.Rank
                    PersistentRequest.StartAll(receive, send)
                    send.Wait()
                    rounds.Add(receive.Value(0))
                Next
                Return rounds
            End Function)

        For rank = 0 To 2
            Dim left = (rank + 2) Mod 3
            Assert.Equal({100 + left, 200 + left, 300 + left}, received(rank))
        Next
    End Sub

End Class
